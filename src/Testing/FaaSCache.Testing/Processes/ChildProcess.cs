namespace FaaSCache.Testing;

/// <summary>
/// A started process (a server, or a program run to its end: <see cref="ProcessRun"/>) whose stdout/stderr are captured
/// (bounded) and drained, killed with its whole tree on dispose and, failing that, when the test process exits.
/// </summary>
internal sealed class ChildProcess : IAsyncDisposable
{
    /// <summary>How much of each stream a server's capture keeps (for error messages).</summary>
    public const int DefaultMaxCapturedChars = 64 * 1024;

    private readonly Process _process;
    private readonly int _maxCapturedChars;
    private readonly StringBuilder _stdout = new();
    private readonly StringBuilder _stderr = new();
    private readonly Lock _gate = new();
    private OwnedProcess? _owned;

    private ChildProcess(Process process, int maxCapturedChars)
    {
        _process = process;
        _maxCapturedChars = maxCapturedChars;
    }

    public int Id { get; private set; }

    public bool HasExited => _process.HasExited;

    public int? ExitCode => _process.HasExited ? _process.ExitCode : null;

    /// <summary>What the process wrote so far (stderr first), for error messages.</summary>
    public string CapturedOutput
    {
        get
        {
            lock (_gate)
            {
                return $"--- stderr ---{Environment.NewLine}{_stderr}--- stdout ---{Environment.NewLine}{_stdout}";
            }
        }
    }

    /// <summary>Gets what the process wrote to stdout so far (up to the capture's bound).</summary>
    public string Stdout
    {
        get
        {
            lock (_gate)
            {
                return _stdout.ToString();
            }
        }
    }

    /// <summary>Gets what the process wrote to stderr so far (up to the capture's bound).</summary>
    public string Stderr
    {
        get
        {
            lock (_gate)
            {
                return _stderr.ToString();
            }
        }
    }

    /// <summary>
    /// Starts <paramref name="fileName"/> with <paramref name="environment"/> added to this process's; throws
    /// <see cref="System.ComponentModel.Win32Exception"/> when it cannot be run.
    /// </summary>
    public static ChildProcess Start(string fileName, IEnumerable<string> arguments, string workingDirectory, IReadOnlyDictionary<string, string>? environment = null, int maxCapturedChars = DefaultMaxCapturedChars)
    {
        ProcessStartInfo startInfo = OwnedProcess.StartInfo(fileName, workingDirectory);
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            startInfo.Environment[name] = value;
        }

        var process = new Process { StartInfo = startInfo, EnableRaisingEvents = true };
        var child = new ChildProcess(process, maxCapturedChars);
        child._owned = OwnedProcess.Start(process, line => child.Append(child._stdout, line), line => child.Append(child._stderr, line));
        child.Id = process.Id;
        return child;
    }

    /// <summary>Waits at most <paramref name="timeout"/> for the process to exit; true when it has.</summary>
    public Task<bool> WaitForExitAsync(TimeSpan timeout) => ExitedWithinAsync(timeout, CancellationToken.None);

    /// <summary>
    /// Waits at most <paramref name="timeout"/> for the process to exit (and its output to be drained); true when it has.
    /// Throws <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> is cancelled first.
    /// </summary>
    public async Task<bool> ExitedWithinAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        cts.CancelAfter(timeout);
        try
        {
            await _process.WaitForExitAsync(cts.Token);
            return true;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return _process.HasExited;
        }
    }

    /// <summary>SIGKILLs the process tree and waits for it to exit, keeping the handle (its output and exit code stay readable).</summary>
    public Task KillAsync() => _owned!.KillAsync();

    /// <summary>Kills the process tree and waits for it to exit.</summary>
    public ValueTask DisposeAsync() => _owned?.DisposeAsync() ?? ValueTask.CompletedTask;

    private void Append(StringBuilder target, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            if (target.Length < _maxCapturedChars)
            {
                target.AppendLine(line);
            }
        }
    }
}
