using System.Diagnostics;
using FaaSCache.Host.AppModel;

namespace FaaSCache.Host.Workers;

/// <summary>
/// Starts one language worker process with the real host's command line, hands its stream to a
/// <see cref="WorkerChannel"/>, and restarts it when it dies (invocations in flight fail clearly).
/// </summary>
public sealed class LanguageWorkerManager : IAsyncDisposable
{
    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(60);
    private readonly WorkerDescription _worker;
    private readonly FunctionApp _app;
    private readonly IReadOnlyList<FunctionDefinition> _functions;
    private readonly WorkerRegistry _registry;
    private readonly IReadOnlyDictionary<string, string> _hostCapabilities;
    private readonly IReadOnlyDictionary<string, string> _environment;
    private readonly ILoggerFactory _loggers;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stopping = new();
    private TaskCompletionSource<WorkerChannel> _current = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Task? _supervisor;
    private Process? _process;
    private int _restarts;

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
        _functions = app.Functions.Where(f => string.Equals(f.Language, worker.Language, StringComparison.OrdinalIgnoreCase)).ToList();
        _registry = registry;
        _hostCapabilities = hostCapabilities;
        _environment = environment;
        _loggers = loggers;
        _logger = loggers.CreateLogger($"Worker.{worker.Language}");
    }

    /// <summary>Gets the language.</summary>
    public string Language => _worker.Language;

    /// <summary>Gets how often the worker was restarted.</summary>
    public int Restarts => Volatile.Read(ref _restarts);

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

    /// <summary>Waits for a worker that has loaded its functions.</summary>
    public async Task<WorkerChannel> GetReadyChannelAsync(CancellationToken cancellationToken)
    {
        for (int attempt = 0; ; attempt++)
        {
            WorkerChannel channel = await Volatile.Read(ref _current).Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            if (channel.IsClosed && attempt < 50 && !_stopping.IsCancellationRequested)
            {
                // Its worker just died; the supervisor is publishing the next one.
                await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                continue;
            }

            try
            {
                await channel.Ready.WaitAsync(ConnectTimeout, cancellationToken).ConfigureAwait(false);
                return channel;
            }
            catch (WorkerFailedException) when (attempt < 2 && !_stopping.IsCancellationRequested)
            {
                // That process died while starting; the supervisor is starting another one.
                await Task.Delay(200, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private async Task SuperviseAsync(Uri grpcUri)
    {
        int quickFailures = 0;
        while (!_stopping.IsCancellationRequested)
        {
            string workerId = Guid.NewGuid().ToString();
            var channel = new WorkerChannel(workerId, _worker, _app.RootDirectory, _functions, _hostCapabilities, _loggers);
            _registry.Add(channel);
            var started = Stopwatch.StartNew();
            Process process;
            try
            {
                process = StartProcess(grpcUri, workerId);
            }
            catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException)
            {
                _registry.Remove(channel);
                string message = $"Cannot start the {_worker.Language} worker '{_worker.DefaultExecutablePath}': {e.Message} (check defaultExecutablePath in {Path.Combine(_worker.WorkerDirectory, "worker.config.json")})";
                _logger.LogError("{Message}", message);
                channel.Fail(message);
                PublishChannel(channel);
                await DelayAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
                continue;
            }

            channel.ProcessId = process.Id;
            _process = process;
            PublishChannel(channel);
            _logger.LogInformation("Started {Language} worker {WorkerId} (pid {Pid})", _worker.Language, workerId, process.Id);
            await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            int code = process.ExitCode;
            // New invocations wait for the next worker rather than pick up this one.
            Volatile.Write(ref _current, new TaskCompletionSource<WorkerChannel>(TaskCreationOptions.RunContinuationsAsynchronously));
            channel.Fail($"The {_worker.Language} worker (pid {process.Id}) exited with code {code}");
            _registry.Remove(channel);
            process.Dispose();
            if (_stopping.IsCancellationRequested)
            {
                break;
            }

            Interlocked.Increment(ref _restarts);
            quickFailures = started.Elapsed < TimeSpan.FromSeconds(10) ? quickFailures + 1 : 0;
            TimeSpan backoff = TimeSpan.FromMilliseconds(Math.Min(10_000, 250 * (1 << Math.Min(quickFailures, 6))));
            _logger.LogWarning("The {Language} worker exited with code {Code}; restarting in {Delay} ms", _worker.Language, code, backoff.TotalMilliseconds);
            await DelayAsync(backoff).ConfigureAwait(false);
        }
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

    private Process StartProcess(Uri grpcUri, string workerId)
    {
        var start = new ProcessStartInfo(_worker.DefaultExecutablePath)
        {
            WorkingDirectory = _app.RootDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in _worker.Arguments)
        {
            start.ArgumentList.Add(a);
        }

        start.ArgumentList.Add(_worker.DefaultWorkerPath);
        foreach (string a in _worker.WorkerArguments)
        {
            start.ArgumentList.Add(a);
        }

        string requestId = Guid.NewGuid().ToString();
        string maxLength = int.MaxValue.ToString(System.Globalization.CultureInfo.InvariantCulture);
        string[] hostArguments =
        [
            "--host", grpcUri.Host, "--port", grpcUri.Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--workerId", workerId, "--requestId", requestId, "--grpcMaxMessageLength", maxLength,
            "--functions-uri", grpcUri.ToString(), "--functions-worker-id", workerId,
            "--functions-request-id", requestId, "--functions-grpc-max-message-length", maxLength,
        ];
        foreach (string a in hostArguments)
        {
            start.ArgumentList.Add(a);
        }

        foreach ((string name, string value) in _environment)
        {
            start.Environment[name] = value;
        }

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        ILogger console = _loggers.CreateLogger($"Worker.{_worker.Language}.Console");
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { Length: > 0 } line)
            {
                console.LogInformation("{Line}", line);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { Length: > 0 } line)
            {
                console.LogInformation("{Line}", line);
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
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

        _stopping.Dispose();
    }
}
