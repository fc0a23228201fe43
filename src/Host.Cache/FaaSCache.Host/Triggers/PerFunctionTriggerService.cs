namespace FaaSCache.Host.Triggers;

/// <summary>
/// A trigger that listens once per function (a timer's schedule, a queue's poller): when the app's functions are indexed
/// and the host runs, one <see cref="ListenAsync"/> per function it <see cref="Handles"/>, each until the host stops.
/// </summary>
/// <param name="app">The function app.</param>
/// <param name="lifecycle">The host's lifecycle (listening starts once it runs), or null to start once indexed.</param>
public abstract class PerFunctionTriggerService(FunctionApp app, Start.HostLifecycle? lifecycle) : IHostedService, IDisposable
{
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _listeners = [];
    private Task? _starting;

    /// <summary>Gets the token cancelled when the host stops.</summary>
    protected CancellationToken Stopping => _stopping.Token;

    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken)
    {
        // A worker-indexed app's functions are known only once its worker runs, after the host started.
        _starting = Task.Run(StartWhenIndexedAsync, CancellationToken.None);
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        if (_starting is not null)
        {
            await _starting.ConfigureAwait(false);
        }

        await Task.WhenAll(_listeners).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Whether <paramref name="function"/> has this service's trigger.</summary>
    /// <param name="function">An indexed function.</param>
    /// <returns>True to listen for it.</returns>
    protected abstract bool Handles(FunctionDefinition function);

    /// <summary>Listens for <paramref name="function"/>'s trigger and invokes it, until <see cref="Stopping"/>.</summary>
    /// <param name="function">A function this service handles.</param>
    /// <returns>A task that ends when the host stops (or the function cannot listen).</returns>
    protected abstract Task ListenAsync(FunctionDefinition function);

    /// <summary>Releases the stop signal.</summary>
    /// <param name="disposing">True when called from <see cref="Dispose()"/>.</param>
    protected virtual void Dispose(bool disposing)
    {
        if (disposing)
        {
            _stopping.Dispose();
        }
    }

    private async Task StartWhenIndexedAsync()
    {
        if (await TriggerListeners.FunctionsWhenRunningAsync(app, lifecycle, _stopping.Token).ConfigureAwait(false) is not { } functions)
        {
            return;
        }

        foreach (FunctionDefinition function in functions.Where(Handles))
        {
            _listeners.Add(Task.Run(() => ListenAsync(function), CancellationToken.None));
        }
    }
}
