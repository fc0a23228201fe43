using System.Runtime.InteropServices;

namespace FaaSCache.Testing;

/// <summary>
/// Signals sent with kill(2) from the test's own thread: at once (no <c>/bin/kill</c> process per signal, which takes
/// milliseconds), so that steps can follow each other within microseconds: stop a process, let it run, stop it again.
/// </summary>
public static partial class ProcessSignals
{
    /// <summary>SIGKILL on Linux.</summary>
    public const int Kill = 9;

    /// <summary>SIGTERM on Linux.</summary>
    public const int Terminate = 15;

    /// <summary>SIGCONT on Linux.</summary>
    public const int Continue = 18;

    /// <summary>SIGSTOP on Linux.</summary>
    public const int Stop = 19;

    /// <summary>
    /// Sends <paramref name="signal"/> to process <paramref name="pid"/>; throws <see cref="InvalidOperationException"/>,
    /// naming both and the reason, if kill(2) fails (e.g. the process is gone).
    /// </summary>
    public static void Send(int pid, int signal)
    {
        if (SendSignal(pid, signal) != 0)
        {
            int error = Marshal.GetLastPInvokeError();
            throw new InvalidOperationException($"kill({pid}, {signal}) failed: {Marshal.GetPInvokeErrorMessage(error)} (errno {error})");
        }
    }

    /// <summary>
    /// Lets the stopped process <paramref name="pid"/> run for about <paramref name="window"/> (a busy wait, so that the
    /// window stays short on a loaded machine), then stops it again.
    /// </summary>
    public static void RunFor(int pid, TimeSpan window)
    {
        long end = System.Diagnostics.Stopwatch.GetTimestamp() + (long)(window.TotalSeconds * System.Diagnostics.Stopwatch.Frequency);
        Send(pid, Continue);
        while (System.Diagnostics.Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(20);
        }

        Send(pid, Stop);
    }

    /// <summary>
    /// Lets the process <paramref name="pid"/>, stopped by the caller (SIGSTOP), run a millisecond at a time, pausing a
    /// few milliseconds after each step so that what it sent can land, until <paramref name="reached"/> holds; returns the
    /// number of steps, with the process stopped again. However late the calling thread runs, the process never runs
    /// for long, so a fault can be injected at a point of a fast transfer that watching at full speed would miss. Throws
    /// (and lets the process run on) when <paramref name="ended"/> holds first or <paramref name="limit"/> passes.
    /// </summary>
    public static int StepUntil(int pid, Func<bool> reached, Func<bool> ended, TimeSpan limit)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        try
        {
            for (int steps = 0; ; steps++)
            {
                Thread.Sleep(3);
                if (reached())
                {
                    return steps;
                }

                if (ended())
                {
                    throw new InvalidOperationException($"What was awaited ended after {steps} steps of process {pid}, before the point to stop at was reached.");
                }

                if (clock.Elapsed > limit)
                {
                    throw new TimeoutException($"The point to stop at was not reached within {limit.TotalSeconds:0} s ({steps} steps of process {pid}).");
                }

                RunFor(pid, TimeSpan.FromMilliseconds(1));
            }
        }
        catch
        {
            Send(pid, Continue);
            throw;
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int SendSignal(int pid, int signal);
}
