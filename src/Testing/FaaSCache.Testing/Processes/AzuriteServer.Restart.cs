namespace FaaSCache.Testing;

/// <summary>
/// Stopping Azurite and starting it again on the same port with the same <c>--location</c> folder: a storage outage in
/// which connections are refused (not a freeze), after which every blob written before it is still there.
/// </summary>
public sealed partial class AzuriteServer
{
    /// <summary>
    /// How long Azurite may take to exit after SIGTERM: it answers the requests in flight, then saves its loki metadata
    /// (about 1 s idle); only past this is it SIGKILLed, which can lose metadata written in the last 5 s (its autosave).
    /// </summary>
    public static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(30);

    private static readonly TimeSpan RelaunchPause = TimeSpan.FromMilliseconds(250);

    private readonly SemaphoreSlim _restartGate = new(1, 1);

    /// <summary>Gets a value indicating whether the Azurite process is running (false between <see cref="StopAsync"/> and <see cref="StartAgainAsync"/>).</summary>
    public bool IsRunning => !_process.HasExited;

    /// <summary>Stops Azurite, then starts it again on the same port and folder and waits until it answers.</summary>
    public async Task<AzuriteStop> RestartAsync(CancellationToken cancellationToken = default)
    {
        AzuriteStop stop = await StopAsync(cancellationToken);
        await StartAgainAsync(cancellationToken);
        return stop;
    }

    /// <summary>
    /// Sends SIGTERM (Azurite closes its listener, finishes the requests in flight and flushes its metadata store) and
    /// waits at most <see cref="StopTimeout"/> for the process to exit; SIGKILLs it only past that, and says so in the result.
    /// Connections to <see cref="Port"/> are refused until <see cref="StartAgainAsync"/>.
    /// </summary>
    public async Task<AzuriteStop> StopAsync(CancellationToken cancellationToken = default)
    {
        await _restartGate.WaitAsync(cancellationToken);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            ChildProcess process = _process;
            if (process.HasExited)
            {
                throw new InvalidOperationException($"Azurite (pid {process.Id}) is not running (exit code {process.ExitCode}); start it again with StartAgainAsync.");
            }

            var clock = Stopwatch.StartNew();
            try
            {
                ProcessSignals.Send(process.Id, ProcessSignals.Terminate);
            }
            catch (InvalidOperationException) when (process.HasExited)
            {
                // It exited between the check and the signal.
            }

            bool exited = await process.WaitForExitAsync(StopTimeout);
            if (!exited)
            {
                await process.KillAsync();
            }

            return new AzuriteStop(process.Id, clock.Elapsed, !exited, process.ExitCode);
        }
        finally
        {
            _restartGate.Release();
        }
    }

    /// <summary>
    /// Starts Azurite again on <see cref="Port"/> with the same <see cref="DataDirectory"/> after <see cref="StopAsync"/>
    /// and waits at most <see cref="StartTimeout"/> until it answers a real request. When the port is still taken
    /// (EADDRINUSE) it tries again until that deadline; it never moves to another port, since clients hold this one.
    /// </summary>
    public async Task StartAgainAsync(CancellationToken cancellationToken = default)
    {
        await _restartGate.WaitAsync(cancellationToken);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            if (!_process.HasExited)
            {
                throw new InvalidOperationException($"Azurite (pid {_process.Id}) is still running on port {Port}; stop it first (StopAsync).");
            }

            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            deadline.CancelAfter(StartTimeout);
            int attempts = 0;
            try
            {
                while (true)
                {
                    attempts++;
                    await ReplaceProcessAsync();
                    if (await WaitUntilAnswersAsync(deadline.Token))
                    {
                        return;
                    }

                    string output = _process.CapturedOutput;
                    if (!AddressInUseMarkers.Any(m => output.Contains(m, StringComparison.OrdinalIgnoreCase)))
                    {
                        throw new InvalidOperationException(
                            $"Azurite exited with code {_process.ExitCode} when started again on 127.0.0.1:{Port} with --location {DataDirectory}.{Environment.NewLine}Azurite output:{Environment.NewLine}{output}");
                    }

                    await Task.Delay(RelaunchPause, deadline.Token);
                }
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException(
                    $"Azurite did not answer on 127.0.0.1:{Port} within {StartTimeout.TotalSeconds:0} s of being started again ({attempts} attempts).{Environment.NewLine}" +
                    $"Azurite output:{Environment.NewLine}{_process.CapturedOutput}{(_lastProbeError is { } probe ? $"{Environment.NewLine}(last probe error: {probe})" : string.Empty)}");
            }
        }
        finally
        {
            _restartGate.Release();
        }
    }

    /// <summary>Launches a new Azurite process on the same port and folder in place of the exited one.</summary>
    private async Task ReplaceProcessAsync()
    {
        ChildProcess exited = _process;
        _process = _launch(Port, DataDirectory);
        await exited.DisposeAsync();
    }

    /// <summary>True once the current process answers; false when it exits first.</summary>
    private async Task<bool> WaitUntilAnswersAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_process.HasExited)
            {
                return false;
            }

            if (await AnswersAsync(cancellationToken))
            {
                return true;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(100), cancellationToken);
        }
    }
}
