namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>A process started inside a namespace through <see cref="NetworkNamespace.Wrap"/>, killed on dispose.</summary>
internal sealed class WrappedProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _stdout = new();
    private readonly StringBuilder _stderr = new();
    private readonly Lock _gate = new();

    private WrappedProcess(Process process) => _process = process;

    /// <summary>Raised for each line the process writes to stdout.</summary>
    public event Action<string>? OutputLine;

    public Process Process => _process;

    public string Output
    {
        get
        {
            lock (_gate)
            {
                return $"stdout: {_stdout}{Environment.NewLine}stderr: {_stderr}";
            }
        }
    }

    public string StandardOutput
    {
        get
        {
            lock (_gate)
            {
                return _stdout.ToString();
            }
        }
    }

    /// <summary>Starts <paramref name="fileName"/> with <paramref name="arguments"/> in <paramref name="network"/>.</summary>
    public static WrappedProcess Start(NetworkNamespace network, string fileName, params string[] arguments)
    {
        var startInfo = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        return Start(network.Wrap(startInfo));
    }

    /// <summary>Starts an already wrapped <paramref name="startInfo"/> (stdout and stderr must be redirected).</summary>
    public static WrappedProcess Start(ProcessStartInfo startInfo)
    {
        var process = new Process { StartInfo = startInfo, EnableRaisingEvents = true };
        var wrapped = new WrappedProcess(process);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                return;
            }

            lock (wrapped._gate)
            {
                wrapped._stdout.AppendLine(e.Data);
            }

            wrapped.OutputLine?.Invoke(e.Data);
        };
        process.ErrorDataReceived += (_, e) =>
        {
            lock (wrapped._gate)
            {
                wrapped._stderr.AppendLine(e.Data);
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return wrapped;
    }

    /// <summary>Waits for the exit (bounded by <paramref name="timeout"/>) and returns the exit code.</summary>
    public async Task<int> WaitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"{_process.StartInfo.FileName} {string.Join(' ', _process.StartInfo.ArgumentList)} did not exit in {timeout}: {Output}");
        }

        return _process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(10)).Token);
            }
        }
        catch (InvalidOperationException)
        {
            // Never started or already reaped.
        }
        finally
        {
            _process.Dispose();
        }
    }
}
