namespace FaaSCache.Testing;

/// <summary>Kills a process together with all its descendants.</summary>
public static class ProcessTree
{
    /// <summary>Kills <paramref name="process"/> and its descendants without waiting; never throws.</summary>
    public static void Kill(Process process)
    {
        try
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }
        catch (InvalidOperationException)
        {
            // Already exited or never started.
        }
        catch (Win32Exception)
        {
            // Exited between the check and the kill.
        }
    }

    /// <summary>
    /// Kills <paramref name="process"/> and its descendants and waits until it has exited.
    /// Throws <see cref="TimeoutException"/> when it is still running after <paramref name="timeout"/>.
    /// </summary>
    public static async Task KillAsync(Process process, TimeSpan timeout)
    {
        Kill(process);
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cts.Token);
        }
        catch (InvalidOperationException)
        {
            // Never started.
        }
        catch (OperationCanceledException)
        {
            if (!process.HasExited)
            {
                throw new TimeoutException($"Process {process.Id} did not exit within {timeout.TotalSeconds:0} s of being killed.");
            }
        }
    }
}
