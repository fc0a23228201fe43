namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>Invocations the test starts and ends by hand: the Load Daemon's yield signal, under the test's control.</summary>
internal sealed class InvocationGate : IInvocationActivity
{
    private int _inFlight;

    public event EventHandler? InFlightChanged;

    public int InFlight => Volatile.Read(ref _inFlight);

    /// <summary>Starts an invocation; dispose to end it.</summary>
    public IDisposable Start()
    {
        Interlocked.Increment(ref _inFlight);
        InFlightChanged?.Invoke(this, EventArgs.Empty);
        return new End(this);
    }

    private sealed class End(InvocationGate gate) : IDisposable
    {
        private int _done;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _done, 1) == 0)
            {
                Interlocked.Decrement(ref gate._inFlight);
                gate.InFlightChanged?.Invoke(gate, EventArgs.Empty);
            }
        }
    }
}
