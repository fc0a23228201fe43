using System.Diagnostics.Metrics;

namespace FaaSCache.Host.Start;

/// <summary>Where the host is in its life, as the Functions host names it (<c>ScriptHostState</c>).</summary>
public enum HostState
{
    /// <summary>Listening, but the workers have not all indexed and loaded the app's functions yet.</summary>
    Initializing,

    /// <summary>Every worker has answered its metadata and load requests: requests are served.</summary>
    Running,

    /// <summary>Indexing failed or a worker could not start: requests get 503 with the error.</summary>
    Error,

    /// <summary>Shutting down.</summary>
    Stopping,
}

/// <summary>
/// Ready means ready: the host is <see cref="HostState.Initializing"/> from the moment it listens until the app is indexed
/// and every language worker has loaded its functions, then <see cref="HostState.Running"/>. HTTP requests that arrive
/// before wait for it (<see cref="WaitAsync"/>, the Functions host's <c>HostAvailabilityCheckMiddleware</c>), triggers
/// start after it, and the readiness endpoint and <c>/metrics</c> say which it is.
/// </summary>
public sealed class HostLifecycle : IDisposable
{
    /// <summary>The Functions host's wait for a host that is not ready yet (<c>ScriptConstants.HostTimeoutSeconds</c>).</summary>
    public static readonly TimeSpan DefaultReadyTimeout = TimeSpan.FromSeconds(30);

    /// <summary>The Functions host's answer once the wait is over and the host is still not running.</summary>
    public const string NotRunningMessage = "Function host is not running.";

    /// <summary>The meter of the host's own instruments (the cachelet's are <c>FaaSCache</c>).</summary>
    public const string MeterName = "FaaSCache.Host";

    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Meter _meter = new(MeterName);
    private volatile HostState _state = HostState.Initializing;
    private string? _error;

    /// <summary>Initializes a new instance of the <see cref="HostLifecycle"/> class.</summary>
    public HostLifecycle()
    {
        // One series per state, 1 for the state the host is in: faascache_host_state{state="Initializing"} 1.
        _meter.CreateObservableGauge("faascache.host.state", () => Enum.GetValues<HostState>()
            .Select(s => new Measurement<int>(s == _state ? 1 : 0, new KeyValuePair<string, object?>("state", s.ToString()))),
            description: "1 for the state the host is in (Initializing until every worker has loaded the app's functions)");
        _ = _ready.Task.ContinueWith(t => t.Exception, TaskScheduler.Default);
    }

    /// <summary>Gets the state now.</summary>
    public HostState State => _state;

    /// <summary>Gets why the host is in <see cref="HostState.Error"/>, or null.</summary>
    public string? Error => Volatile.Read(ref _error);

    /// <summary>Gets a task that completes when the host runs, or faults with the error.</summary>
    public Task Ready => _ready.Task;

    /// <summary>Follows the app's indexing and its workers' start, until the host runs or fails.</summary>
    public async Task TrackAsync(FunctionApp app, IReadOnlyDictionary<string, LanguageWorkerManager> workers, CancellationToken stopping)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(workers);
        try
        {
            await app.Indexed.WaitAsync(stopping).ConfigureAwait(false);
            await Task.WhenAll(workers.Values.Select(w => w.GetReadyChannelAsync(stopping))).ConfigureAwait(false);
            _state = HostState.Running;
            _ready.TrySetResult();
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            Stopping();
        }
        catch (Exception e) when (e is AppLoadException or WorkerStartupFailedException or WorkerFailedException or TimeoutException)
        {
            Fail(e.Message);
        }
    }

    /// <summary>The host cannot serve: <paramref name="error"/> is what requests and the status say.</summary>
    public void Fail(string error)
    {
        Volatile.Write(ref _error, error);
        _state = HostState.Error;
        _ready.TrySetException(new InvalidOperationException(error));
    }

    /// <summary>The host is shutting down.</summary>
    public void Stopping()
    {
        _state = HostState.Stopping;
        _ready.TrySetException(new InvalidOperationException("The host is stopping."));
    }

    /// <summary>
    /// Waits until the host runs, at most <paramref name="timeout"/>; false when it did not (it failed, stops, or the time ran out).
    /// </summary>
    public async Task<bool> WaitAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (_state == HostState.Running)
        {
            return true;
        }

        try
        {
            await _ready.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is TimeoutException or InvalidOperationException)
        {
            return false;
        }
    }

    /// <inheritdoc />
    public void Dispose() => _meter.Dispose();
}
