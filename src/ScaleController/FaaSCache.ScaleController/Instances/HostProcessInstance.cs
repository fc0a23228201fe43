namespace FaaSCache.ScaleController.Instances;

/// <summary>One FaaSCache host process started by <see cref="HostProcessLauncher"/>, with its shared-memory folder.</summary>
internal sealed class HostProcessInstance(string id, Process process, Uri http, Uri peer, string shmDirectory, Func<ValueTask> releaseNetwork, OutputTail tail, ILogger logger) : ILaunchedInstance
{
    private int _disposed;

    public string Id { get; } = id;

    public Uri HttpEndpoint { get; } = http;

    public Uri PeerEndpoint { get; } = peer;

    public TimeSpan LoadTime { get; set; }

    public int ProcessId { get; } = process.Id;

    public bool HasExited => process.HasExited;

    public int? ExitCode => process.HasExited ? process.ExitCode : null;

    public string OutputTail => tail.ToString();

    public async Task StopAsync(TimeSpan timeout)
    {
        if (!process.HasExited)
        {
            await SignalTermAsync();
            using var limit = new CancellationTokenSource(timeout);
            try
            {
                await process.WaitForExitAsync(limit.Token);
                logger.LogInformation("{Id} (pid {Pid}) exited with code {Code} after SIGTERM", Id, ProcessId, process.ExitCode);
            }
            catch (OperationCanceledException)
            {
                logger.LogWarning("{Id} (pid {Pid}) did not exit within {Seconds} s of SIGTERM; killing it", Id, ProcessId, timeout.TotalSeconds);
            }
        }

        await DisposeAsync();
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(15));
                await process.WaitForExitAsync(limit.Token);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException or System.ComponentModel.Win32Exception)
        {
            logger.LogWarning("Could not kill {Id} (pid {Pid}): {Error}", Id, ProcessId, e.Message);
        }
        finally
        {
            process.Dispose();
            try
            {
                Directory.Delete(shmDirectory, recursive: true);
            }
            catch (DirectoryNotFoundException)
            {
            }
            catch (IOException e)
            {
                logger.LogWarning("Could not remove {Id}'s shared memory {Shm}: {Error}", Id, shmDirectory, e.Message);
            }

            try
            {
                await releaseNetwork();
            }
            catch (Exception e)
            {
                logger.LogWarning("Could not remove {Id}'s network: {Error}", Id, e.Message);
            }
        }
    }

    // SIGTERM, as a container stop does, so the host flushes async writes and leaves membership; .NET has no API for it.
    private async Task SignalTermAsync()
    {
        var start = new ProcessStartInfo("/bin/kill") { UseShellExecute = false, RedirectStandardError = true };
        start.ArgumentList.Add("-TERM");
        start.ArgumentList.Add(ProcessId.ToString(CultureInfo.InvariantCulture));
        using Process kill = Process.Start(start)!;
        await kill.WaitForExitAsync();
    }
}
