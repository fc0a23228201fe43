using FaaSCache.Caching;
using FaaSCache.Cluster;
using FaaSCache.Hosting;
using FaaSCache.Ownership;
using FaaSCache.Prewarm;
using FaaSCache.Scaling.Grpc;
using FaaSCache.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace FaaSCache.Scaling;

/// <summary>Adds §4's scaling to a cachelet: the three voters, bandwidth-scaled loads, the transfer profile and probe.</summary>
public static class ScalingBuilderExtensions
{
    /// <summary>
    /// Registers the voters (compute, cache size, bandwidth) as WebJobs scale monitors and target scalers (a WebJobs host
    /// with scale services reports them through its own scale API), their aggregate for the FaaSCache host's
    /// <c>POST /admin/host/scale/status</c> and vote service, the measured transfer profile and its probe, and the
    /// bandwidth scaler the cachelet splits large misses with (with the scale controller from
    /// <c>FaaSCache:ScaleController</c> for urgent votes, when set). host.json's <c>scaling</c> section turns each on or off.
    /// </summary>
    public static FaaSCacheBuilder AddScaling(this FaaSCacheBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        IServiceCollection services = builder.Services;
        services.TryAddSingleton(sp => new InvocationMeter(sp.GetService<TimeProvider>()));
        // §3.3: the Load Daemon yields to the invocations the meter counts.
        services.TryAddSingleton<IInvocationActivity>(sp => sp.GetRequiredService<InvocationMeter>());
        services.TryAddSingleton(sp => new TransferProfiler(sp.GetService<TimeProvider>()));
        services.TryAddSingleton(sp => new BandwidthScaler(sp.GetRequiredService<TransferProfiler>(), CreateRequester(sp), time: sp.GetService<TimeProvider>()));
        services.TryAddSingleton(sp => new ComputeScaleMonitor(sp.GetRequiredService<InvocationMeter>(), sp.GetRequiredService<FaaSCacheOptions>(), AppName(sp), sp.GetService<TimeProvider>()));
        services.TryAddSingleton(sp => new CacheSizeScaleMonitor(sp.GetRequiredService<ICacheAdmin>(), AppName(sp), sp.GetService<TimeProvider>()));
        services.TryAddSingleton(sp => new BandwidthScaleMonitor(sp.GetRequiredService<BandwidthScaler>(), AppName(sp), sp.GetService<TimeProvider>()));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IFaaSCacheVoter, ComputeScaleMonitor>(sp => sp.GetRequiredService<ComputeScaleMonitor>()));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IFaaSCacheVoter, CacheSizeScaleMonitor>(sp => sp.GetRequiredService<CacheSizeScaleMonitor>()));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IFaaSCacheVoter, BandwidthScaleMonitor>(sp => sp.GetRequiredService<BandwidthScaleMonitor>()));
        services.TryAddSingleton(sp => new ScaleVoteAggregator(
            sp.GetServices<IFaaSCacheVoter>(),
            sp.GetRequiredService<FaaSCacheOptions>(),
            sp.GetRequiredService<InvocationMeter>(),
            sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value.InstanceId!));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, ScaleMonitorRegistration>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, TransferProbe>(sp => new TransferProbe(
            sp.GetRequiredService<IBlobStore>(),
            sp.GetService<IPeerClient>(),
            sp.GetRequiredService<IOwnerLocator>(),
            sp.GetRequiredService<TransferProfiler>(),
            sp.GetRequiredService<FaaSCacheOptions>(),
            sp.GetRequiredService<ILogger<TransferProbe>>(),
            sp.GetService<TimeProvider>())));
        return builder;
    }

    /// <summary>
    /// Registers the vote service the scale controller polls (Scale.proto's <c>InstanceScale</c>) behind the peer key's
    /// interceptor; needs <c>.AddPeers(PeerServerHosting.HostServer)</c>. Map it with <see cref="MapFaaSCacheScaleVotes"/>.
    /// </summary>
    public static FaaSCacheBuilder AddScaleVoteService(this FaaSCacheBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.AddGrpc().AddServiceOptions<InstanceScaleService>(o => o.Interceptors.Add<PeerAuthInterceptor>());
        return builder;
    }

    /// <summary>Maps the vote service; chain <c>.RequireHost("*:&lt;peerPort&gt;")</c> to serve it on the peer port only.</summary>
    public static GrpcServiceEndpointConventionBuilder MapFaaSCacheScaleVotes(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        return endpoints.MapGrpcService<InstanceScaleService>();
    }

    private static string AppName(IServiceProvider sp) => sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value.AppName!;

    private static GrpcScaleOutRequester? CreateRequester(IServiceProvider sp)
    {
        FaaSCacheInstanceOptions instance = sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value;
        return instance.ScaleController is { Length: > 0 } address
            ? new GrpcScaleOutRequester(new Uri(address), PeerKey.FromConnectionString(instance.StorageConnection!, instance.AppName!), instance.AppName!, instance.InstanceId!, sp.GetService<TimeProvider>())
            : null;
    }

    /// <summary>
    /// Hands the enabled voters to a WebJobs host's scale managers when it has them (<c>AddWebJobsScale</c>), so that its
    /// <c>IScaleStatusProvider</c> and the platform see them; a voter switched off in host.json is not registered.
    /// </summary>
    private sealed class ScaleMonitorRegistration(IServiceProvider services) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            ScalingOptions scaling = services.GetRequiredService<FaaSCacheOptions>().Scaling;
            IScaleMonitorManager? monitors = services.GetService<IScaleMonitorManager>();
            ITargetScalerManager? targets = services.GetService<ITargetScalerManager>();
            foreach (IFaaSCacheVoter voter in services.GetServices<IFaaSCacheVoter>().Where(v => ScaleVoteAggregator.IsEnabled(v.Name, scaling)))
            {
                if (voter is IScaleMonitor monitor)
                {
                    monitors?.Register(monitor);
                }

                if (voter is ITargetScaler scaler)
                {
                    targets?.Register(scaler);
                }
            }

            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
