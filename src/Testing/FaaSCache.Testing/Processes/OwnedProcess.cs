namespace FaaSCache.Testing;

/// <summary>
/// A process this test process started and owns: its output lines go to the handlers given, read as they come; it is
/// killed with its whole tree on dispose and, failing that, when the test process exits.
/// </summary>
internal sealed class OwnedProcess : IAsyncDisposable
{
    private static readonly TimeSpan KillTimeout = TimeSpan.FromSeconds(15);
    private readonly IDisposable _exitRegistration;
    private int _disposed;

    private OwnedProcess(Process process)
    {
        Process = process;
        _exitRegistration = ProcessExitCleanup.Register(() => ProcessTree.Kill(process));
    }

    /// <summary>Gets the process (its exit code and state stay readable after a kill, until dispose).</summary>
    public Process Process { get; }

    /// <summary>How a process to own is started: no shell, no window, both output streams read by <see cref="Start"/>.</summary>
    /// <param name="fileName">The program.</param>
    /// <param name="workingDirectory">Its working folder.</param>
    /// <returns>The start info, for arguments and environment to be added.</returns>
    public static ProcessStartInfo StartInfo(string fileName, string workingDirectory) => new(fileName)
    {
        UseShellExecute = false,
        RedirectStandardOutput = true,
        RedirectStandardError = true,
        CreateNoWindow = true,
        WorkingDirectory = workingDirectory,
    };

    /// <summary>Starts <paramref name="process"/> and reads its standard output and error line by line.</summary>
    /// <param name="process">A process not yet started, its streams redirected.</param>
    /// <param name="onOutput">Called with each standard output line (null at its end).</param>
    /// <param name="onError">Called with each standard error line (null at its end).</param>
    /// <returns>The started process, owned.</returns>
    public static OwnedProcess Start(Process process, Action<string?> onOutput, Action<string?> onError)
    {
        process.OutputDataReceived += (_, e) => onOutput(e.Data);
        process.ErrorDataReceived += (_, e) => onError(e.Data);
        try
        {
            process.Start();
        }
        catch
        {
            process.Dispose();
            throw;
        }

        var owned = new OwnedProcess(process);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return owned;
    }

    /// <summary>SIGKILLs the process tree and waits for it to exit, keeping the handle.</summary>
    /// <returns>A task that ends once the process has exited.</returns>
    public Task KillAsync() => ProcessTree.KillAsync(Process, KillTimeout);

    /// <summary>Kills the process tree, waits for it to exit and releases the handle (once).</summary>
    /// <returns>A task that ends once the process has exited.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await KillAsync();
        }
        finally
        {
            _exitRegistration.Dispose();
            Process.Dispose();
        }
    }
}
