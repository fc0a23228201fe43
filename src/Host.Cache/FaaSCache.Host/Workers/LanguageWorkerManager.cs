namespace FaaSCache.Host.Workers;

/// <summary>
/// Starts one language worker process with the real host's command line (<see cref="WorkerProcessLauncher"/>),
/// hands its stream to a <see cref="WorkerChannel"/>, and restarts it when it dies (invocations in flight fail clearly).
/// A worker that dies before it is ready <see cref="MaxStartupAttempts"/> times in a row is not started
/// again: the language is marked failed, its last output lines are logged, and invocations of it fail at
/// once with <see cref="WorkerStartupFailedException"/> (the HTTP face answers 503 naming the error).
/// </summary>
public sealed class LanguageWorkerManager : IAsyncDisposable
{
    /// <summary>How many start-ups in a row may fail before the language is marked failed.</summary>
    public const int MaxStartupAttempts = 3;

    /// <summary>How many of a worker's last output lines are kept for the error report.</summary>
    public const int OutputTailLines = 20;

    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(60);
    private readonly WorkerDescription _worker;
    private readonly FunctionApp _app;
    private readonly WorkerRegistry _registry;
    private readonly IReadOnlyDictionary<string, string> _hostCapabilities;
    private readonly ILoggerFactory _loggers;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stopping = new();
    private TaskCompletionSource<WorkerChannel> _current = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Task? _supervisor;
    private readonly TaskCompletionSource _failed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly WorkerProcessLauncher _launcher;
    private Process? _process;
    private int _restarts;
    private volatile WorkerState _state = WorkerState.Starting;
    private string? _failure;

    /// <summary>Initializes a new instance of the <see cref="LanguageWorkerManager"/> class.</summary>
    public LanguageWorkerManager(
        WorkerDescription worker,
        FunctionApp app,
        WorkerRegistry registry,
        IReadOnlyDictionary<string, string> hostCapabilities,
        IReadOnlyDictionary<string, string> environment,
        ILoggerFactory loggers)
    {
        _worker = worker;
        _app = app;
        _registry = registry;
        _hostCapabilities = hostCapabilities;
        _loggers = loggers;
        _logger = loggers.CreateLogger($"Worker.{worker.Language}");
        _launcher = new WorkerProcessLauncher(worker, app, environment, loggers);
    }

    /// <summary>Gets the language.</summary>
    public string Language => _worker.Language;

    /// <summary>Gets how often the worker was restarted.</summary>
    public int Restarts => Volatile.Read(ref _restarts);

    /// <summary>Gets where the worker is in its life.</summary>
    public WorkerState State => _state;

    /// <summary>Gets why the language was marked failed (its exit code and last output lines), or null.</summary>
    public string? Failure => Volatile.Read(ref _failure);

    /// <summary>Gets the current worker's process id (0 when none runs).</summary>
    public int ProcessId
    {
        get
        {
            try
            {
                return _process is { HasExited: false } p ? p.Id : 0;
            }
            catch (InvalidOperationException)
            {
                return 0;
            }
        }
    }

    /// <summary>Starts the worker; <paramref name="grpcUri"/> is the host's FunctionRpc endpoint.</summary>
    public void Start(Uri grpcUri) => _supervisor = Task.Run(() => SuperviseAsync(grpcUri));

    /// <summary>
    /// Waits for a worker that has loaded its functions. Throws <see cref="WorkerStartupFailedException"/> at once
    /// when the language has been marked failed (also while waiting), and when the host is stopping.
    /// </summary>
    public async Task<WorkerChannel> GetReadyChannelAsync(CancellationToken cancellationToken)
    {
        using var waiting = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _stopping.Token);
        while (true)
        {
            ThrowIfUnavailable();
            Task<WorkerChannel> current = Volatile.Read(ref _current).Task;
            await WaitOrFailAsync(current, waiting.Token).ConfigureAwait(false);
            WorkerChannel channel = await current.ConfigureAwait(false);
            if (channel.IsClosed)
            {
                // Its worker just died; the supervisor publishes the next one (or marks the language failed).
                await WaitOrFailAsync(Task.Delay(100, waiting.Token), waiting.Token).ConfigureAwait(false);
                continue;
            }

            try
            {
                await WaitOrFailAsync(channel.Ready.WaitAsync(ConnectTimeout, waiting.Token), waiting.Token).ConfigureAwait(false);
                return channel;
            }
            catch (WorkerFailedException) when (_failure is null && !_stopping.IsCancellationRequested)
            {
                // That process died while starting; the supervisor starts another one or gives up.
            }
        }
    }

    /// <summary>Throws <see cref="WorkerStartupFailedException"/> when the language is failed or the host is stopping.</summary>
    public void ThrowIfUnavailable()
    {
        if (Failure is { } failure)
        {
            throw new WorkerStartupFailedException(Language, failure);
        }

        if (_stopping.IsCancellationRequested)
        {
            throw new WorkerStartupFailedException(Language, $"The host is stopping; the {Language} worker takes no more invocations.");
        }
    }

    private async Task WaitOrFailAsync(Task task, CancellationToken cancellationToken)
    {
        try
        {
            await Task.WhenAny(task, _failed.Task).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
        {
            ThrowIfUnavailable();
        }

        ThrowIfUnavailable();
        await task.ConfigureAwait(false);
    }

    private async Task SuperviseAsync(Uri grpcUri)
    {
        int quickFailures = 0;
        int startupFailures = 0;
        while (!_stopping.IsCancellationRequested)
        {
            string workerId = Guid.NewGuid().ToString();
            // The first process of the indexing language is asked for the functions; later ones (restarts) only load them.
            bool index = string.Equals(_app.IndexingLanguage, _worker.Language, StringComparison.OrdinalIgnoreCase) && !_app.Indexed.IsCompleted;
            var channel = new WorkerChannel(workerId, _worker, _app, index, _hostCapabilities, _loggers);
            _registry.Add(channel);
            var started = Stopwatch.StartNew();
            _state = WorkerState.Starting;
            _launcher.ClearOutputTail();
            string exitReason;
            Process process;
            try
            {
                process = _launcher.Start(grpcUri, workerId);
            }
            catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
            {
                _registry.Remove(channel);
                exitReason = $"Cannot start the {_worker.Language} worker '{_worker.DefaultExecutablePath}': {e.Message} (check defaultExecutablePath in {Path.Combine(_worker.WorkerDirectory, "worker.config.json")})";
                channel.Fail(exitReason);
                PublishChannel(channel);
                if (++startupFailures >= MaxStartupAttempts)
                {
                    MarkFailed(exitReason);
                    return;
                }

                _logger.LogError("{Message}", exitReason);
                await DelayAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
                continue;
            }

            channel.ProcessId = process.Id;
            _process = process;
            PublishChannel(channel);
            _ = channel.Ready.ContinueWith(t => _state = t.IsCompletedSuccessfully && !channel.IsClosed ? WorkerState.Running : _state, TaskScheduler.Default);
            _logger.LogInformation("Started {Language} worker {WorkerId} (pid {Pid})", _worker.Language, workerId, process.Id);
            await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            int code = process.ExitCode;
            bool wasReady = channel.Ready.IsCompletedSuccessfully;
            // New invocations wait for the next worker rather than pick up this one.
            Volatile.Write(ref _current, new TaskCompletionSource<WorkerChannel>(TaskCreationOptions.RunContinuationsAsynchronously));
            exitReason = $"The {_worker.Language} worker (pid {process.Id}) exited with code {code}";
            channel.Fail(exitReason);
            _registry.Remove(channel);
            process.Dispose();
            if (_stopping.IsCancellationRequested)
            {
                break;
            }

            // A worker that cannot start (a missing package, a broken install) fails the same way every time:
            // after a few tries, say so and stop, instead of restarting it forever while invocations wait.
            startupFailures = wasReady ? 0 : startupFailures + 1;
            if (startupFailures >= MaxStartupAttempts)
            {
                MarkFailed($"{exitReason} before it was ready, {startupFailures} times in a row");
                return;
            }

            Interlocked.Increment(ref _restarts);
            _state = WorkerState.Restarting;
            quickFailures = started.Elapsed < TimeSpan.FromSeconds(10) ? quickFailures + 1 : 0;
            TimeSpan backoff = TimeSpan.FromMilliseconds(Math.Min(10_000, 250 * (1 << Math.Clamp(quickFailures - 1, 0, 6))));
            string tail = _launcher.OutputTail();
            _logger.LogWarning(
                "The {Language} worker exited with code {Code}{Phase}; restarting in {Delay} ms{Tail}",
                _worker.Language,
                code,
                wasReady ? string.Empty : " before it was ready",
                backoff.TotalMilliseconds,
                wasReady || tail.Length == 0 ? string.Empty : $". Its last output:{Environment.NewLine}{tail}");
            await DelayAsync(backoff).ConfigureAwait(false);
        }

        _state = WorkerState.Stopped;
    }

    private void MarkFailed(string reason)
    {
        string tail = _launcher.OutputTail();
        string failure = tail.Length == 0
            ? $"{reason}; it printed nothing. The host will not start it again; invocations of {_worker.Language} functions fail until the host is restarted."
            : $"{reason}. The host will not start it again; invocations of {_worker.Language} functions fail until the host is restarted. The worker's last output:{Environment.NewLine}{tail}";
        Volatile.Write(ref _failure, failure);
        if (string.Equals(_app.IndexingLanguage, _worker.Language, StringComparison.OrdinalIgnoreCase))
        {
            // The worker that was to index cannot start. The function.json folders are known without it: their routes
            // answer 503 with the worker's error, as any function of a failed language does. An app with no folders has
            // nothing to serve: start-up stops with the worker's error.
            if (_app.FolderFunctions.Count > 0)
            {
                _app.CompleteIndex(_app.FolderFunctions);
            }
            else
            {
                _app.FailIndex($"The {_worker.Language} worker, which indexes the app's functions, cannot start: {failure}");
            }
        }

        // Failed only once the routes are published: whoever sees the state (the status endpoint) finds them answering 503.
        _state = WorkerState.Failed;
        _failed.TrySetResult();
        _logger.LogError("{Failure}", failure);
    }

    private void PublishChannel(WorkerChannel channel)
    {
        if (!_current.TrySetResult(channel))
        {
            _current = new TaskCompletionSource<WorkerChannel>(TaskCreationOptions.RunContinuationsAsynchronously);
            _current.TrySetResult(channel);
        }
    }

    private async Task DelayAsync(TimeSpan delay)
    {
        try
        {
            await Task.Delay(delay, _stopping.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>Asks the worker to finish, then ends it.</summary>
    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        Process? process = _process;
        if (_current.Task.IsCompletedSuccessfully && _current.Task.Result.IsConnected)
        {
            _current.Task.Result.Terminate(TimeSpan.FromSeconds(2));
        }

        if (process is not null)
        {
            try
            {
                using var grace = new CancellationTokenSource(TimeSpan.FromSeconds(4));
                await process.WaitForExitAsync(grace.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                _logger.LogWarning("The {Language} worker (pid {Pid}) did not exit after WorkerTerminate; killing it", _worker.Language, process.Id);
                process.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
                // Already gone.
            }
        }

        if (_supervisor is not null)
        {
            await _supervisor.ConfigureAwait(false);
        }

        if (_state != WorkerState.Failed)
        {
            _state = WorkerState.Stopped;
        }

        _stopping.Dispose();
    }
}
