namespace FaaSCache.Host.Workers;

/// <summary>
/// Starts a language worker's process with the real host's command line and environment, logs what it prints, and keeps
/// its last <see cref="LanguageWorkerManager.OutputTailLines"/> output lines for the report of a worker that cannot start.
/// </summary>
internal sealed class WorkerProcessLauncher
{
    private readonly WorkerDescription _worker;
    private readonly FunctionApp _app;
    private readonly IReadOnlyDictionary<string, string> _environment;
    private readonly ILoggerFactory _loggers;
    private readonly Lock _tailGate = new();
    private readonly Queue<string> _outputTail = new();

    /// <summary>Initializes a new instance of the <see cref="WorkerProcessLauncher"/> class.</summary>
    public WorkerProcessLauncher(WorkerDescription worker, FunctionApp app, IReadOnlyDictionary<string, string> environment, ILoggerFactory loggers)
    {
        _worker = worker;
        _app = app;
        _environment = environment;
        _loggers = loggers;
    }

    /// <summary>Gets the last output lines kept, indented, one a line (empty when the worker printed nothing).</summary>
    public string OutputTail()
    {
        lock (_tailGate)
        {
            return string.Join(Environment.NewLine, _outputTail.Select(l => "    " + l));
        }
    }

    /// <summary>Forgets the output kept: a new process is starting.</summary>
    public void ClearOutputTail()
    {
        lock (_tailGate)
        {
            _outputTail.Clear();
        }
    }

    /// <summary>Starts a worker process that connects to <paramref name="grpcUri"/> as <paramref name="workerId"/>.</summary>
    public Process Start(Uri grpcUri, string workerId)
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

        // As the Functions host sets them (the .NET isolated worker resolves its function's script_file against the
        // application directory and will not load without it).
        start.Environment["FUNCTIONS_WORKER_RUNTIME"] = _worker.Language;
        start.Environment["FUNCTIONS_WORKER_DIRECTORY"] = _worker.WorkerDirectory;
        start.Environment["FUNCTIONS_APPLICATION_DIRECTORY"] = _app.RootDirectory;

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        ILogger console = _loggers.CreateLogger($"Worker.{_worker.Language}.Console");
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { Length: > 0 } line)
            {
                KeepOutputLine(line);
                console.LogInformation("{Line}", line);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { Length: > 0 } line)
            {
                KeepOutputLine(line);
                console.LogInformation("{Line}", line);
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private void KeepOutputLine(string line)
    {
        lock (_tailGate)
        {
            if (_outputTail.Count == LanguageWorkerManager.OutputTailLines)
            {
                _outputTail.Dequeue();
            }

            _outputTail.Enqueue(line);
        }
    }
}
