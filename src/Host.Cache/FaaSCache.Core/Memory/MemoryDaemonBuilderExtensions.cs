using FaaSCache.Hosting;

namespace FaaSCache.Memory;

/// <summary>Adds §3.4's Memory Daemon to a cachelet.</summary>
public static class MemoryDaemonBuilderExtensions
{
    /// <summary>
    /// Registers the Memory Daemon as a hosted service: it watches function memory plus cached bytes against
    /// <c>memoryLimitBytes</c> (else the cgroup's <c>memory.max</c>, else the machine's) and evicts within
    /// <c>memoryHeadroomPercent</c>. Worker processes are counted when the host registers an <see cref="IWorkerProcesses"/>.
    /// </summary>
    public static FaaSCacheBuilder AddMemoryDaemon(this FaaSCacheBuilder builder, TimeSpan? sampleInterval = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.TryAddSingleton(_ => new ProcMemoryReader());
        builder.Services.TryAddSingleton(sp => new MemoryDaemon(
            sp.GetRequiredService<Cachelet>(),
            sp.GetRequiredService<ProcMemoryReader>(),
            sp.GetService<IWorkerProcesses>(),
            sp.GetService<TimeProvider>(),
            sp.GetService<ILogger<MemoryDaemon>>(),
            sampleInterval));
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, MemoryDaemon>(sp => sp.GetRequiredService<MemoryDaemon>()));
        return builder;
    }
}
