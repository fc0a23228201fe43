using FaaSCache.Security.Ports;

namespace FaaSCache.Host.Workers;

/// <summary>
/// Starts the language workers once the server listens (<see cref="StartedAsync"/>) and ends them as soon
/// as the host begins to stop (<see cref="StoppingAsync"/>, before the web server closes), so each worker
/// gets WorkerTerminate on a live stream.
/// </summary>
public sealed class WorkerHostedService(IReadOnlyDictionary<string, LanguageWorkerManager> workers, PortRoles roles, FunctionApp app, HostLifecycle lifecycle) : IHostedLifecycleService, IDisposable
{
    private readonly CancellationTokenSource _stopping = new();

    /// <summary>Gets the FunctionRpc endpoint the workers were given.</summary>
    public Uri? GrpcUri { get; private set; }

    /// <inheritdoc />
    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StartedAsync(CancellationToken cancellationToken)
    {
        GrpcUri = new Uri($"http://127.0.0.1:{roles.PortOf(ListenerRole.Worker)}");
        foreach (LanguageWorkerManager manager in workers.Values)
        {
            manager.Start(GrpcUri);
        }

        // Initializing until the app is indexed and every worker has loaded its functions.
        _ = lifecycle.TrackAsync(app, workers, _stopping.Token);
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public async Task StoppingAsync(CancellationToken cancellationToken)
    {
        lifecycle.Stopping();
        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(workers.Values.Select(w => w.DisposeAsync().AsTask())).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public void Dispose() => _stopping.Dispose();
}
