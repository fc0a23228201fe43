using FaaSCache.Hosting;

namespace FaaSCache.Prewarm;

/// <summary>Adds §3.3's pre-warm to a cachelet.</summary>
public static class PrewarmBuilderExtensions
{
    /// <summary>
    /// Registers the Load Daemon as a hosted service: with <c>prewarm.enabled</c> it loads the objects the app's unload
    /// snapshots select (those this instance owns, yielding to invocations) when the host starts, and writes this
    /// instance's snapshot when it stops. It yields to the invocations an <see cref="IInvocationActivity"/> reports
    /// (<c>AddScaling</c> registers the invocation meter as one); without one it never pauses.
    /// </summary>
    public static FaaSCacheBuilder AddPrewarm(this FaaSCacheBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.TryAddSingleton(sp => new SnapshotStore(
            sp.GetRequiredService<IBlobStore>(),
            sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value.AppName!,
            sp.GetService<ILogger<SnapshotStore>>()));
        builder.Services.TryAddSingleton(sp => new PrewarmMetrics(
            sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value.InstanceId!,
            sp.GetService<System.Diagnostics.Metrics.IMeterFactory>()));
        builder.Services.TryAddSingleton(sp => new LoadDaemon(
            sp.GetRequiredService<Cachelet>(),
            sp.GetRequiredService<SnapshotStore>(),
            sp.GetRequiredService<IOwnerLocator>(),
            sp.GetService<IInvocationActivity>(),
            sp.GetService<TimeProvider>(),
            sp.GetService<ILogger<LoadDaemon>>(),
            sp.GetRequiredService<PrewarmMetrics>())
        {
            HandOffWait = LoadDaemon.HandOffWaitFor(sp.GetRequiredService<Cachelet>().Options.Membership.HeartbeatInterval),
            HostStarted = sp.GetService<IHostApplicationLifetime>()?.ApplicationStarted ?? CancellationToken.None,
        });
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, LoadDaemon>(sp => sp.GetRequiredService<LoadDaemon>()));
        return builder;
    }
}
