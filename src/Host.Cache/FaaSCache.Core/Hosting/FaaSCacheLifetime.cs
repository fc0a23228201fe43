namespace FaaSCache.Hosting;

/// <summary>
/// Creates the cachelet when the host starts (so bad settings stop start-up, not the first invocation) and disposes
/// it once every hosted service (the job host, the web server, the workers) has stopped: pending writes are flushed
/// and the maps removed.
/// </summary>
internal sealed class FaaSCacheLifetime(Cachelet cachelet, ILogger<FaaSCacheLifetime>? logger = null) : IHostedLifecycleService
{
    private readonly ILogger _logger = (ILogger?)logger ?? NullLogger.Instance;

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    // After StopAsync of every hosted service: no invocation still reads a map.
    public async Task StoppedAsync(CancellationToken cancellationToken)
    {
        long pending = cachelet.PendingWrites;
        await cachelet.DisposeAsync().ConfigureAwait(false);
        _logger.LogInformation(
            "FaaSCache stopped: {Pending} pending write(s) flushed ({Lost} lost), shared-memory maps removed from {MapDirectory}",
            pending,
            cachelet.LostWrites.Count,
            cachelet.SharedMemory.MapDirectory);
    }
}
