using System.Collections.Concurrent;
using System.Runtime.InteropServices;

namespace FaaSCache.Testing;

/// <summary>
/// Last-resort cleanup: actions registered here run when the test process exits
/// (<see cref="AppDomain.ProcessExit"/>) or is ended by SIGTERM, SIGINT or SIGHUP, so servers and
/// temp folders are not left behind when a fixture was never disposed. (SIGKILL cannot be caught.)
/// </summary>
internal static class ProcessExitCleanup
{
    private static readonly ConcurrentDictionary<long, Action> Actions = new();
    private static readonly List<PosixSignalRegistration> SignalRegistrations = [];
    private static long _nextId;
    private static int _hooked;

    /// <summary>Registers <paramref name="action"/>; dispose the result to unregister it (normal cleanup ran).</summary>
    public static IDisposable Register(Action action)
    {
        if (Interlocked.Exchange(ref _hooked, 1) == 0)
        {
            AppDomain.CurrentDomain.ProcessExit += (_, _) => RunAll();

            // Without these the runtime does not run ProcessExit on a signal; the handlers do not
            // cancel, so the signal's default action (terminate) still follows.
            foreach (var signal in (PosixSignal[])[PosixSignal.SIGTERM, PosixSignal.SIGINT, PosixSignal.SIGHUP])
            {
                try
                {
                    SignalRegistrations.Add(PosixSignalRegistration.Create(signal, _ => RunAll()));
                }
                catch (PlatformNotSupportedException)
                {
                    // Not on this platform: ProcessExit still covers normal exits.
                }
            }
        }

        var id = Interlocked.Increment(ref _nextId);
        Actions[id] = action;
        return new Registration(id);
    }

    private static void RunAll()
    {
        foreach (var id in Actions.Keys)
        {
            if (Actions.TryRemove(id, out var action))
            {
                try
                {
                    action();
                }
                catch
                {
                    // Best effort while the process is going away.
                }
            }
        }
    }

    private sealed class Registration(long id) : IDisposable
    {
        public void Dispose() => Actions.TryRemove(id, out _);
    }
}
