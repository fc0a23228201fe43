namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>The front door's traffic as the decisions need it: requests held or in flight now, and the last request's time.</summary>
public sealed class FrontDoorTraffic(TimeProvider time)
{
    private int _pending;
    private int _held;
    private long _lastRequestTicks;

    /// <summary>Gets the requests the front door holds or forwards now.</summary>
    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Gets the requests held for a cold start now.</summary>
    public int Held => Volatile.Read(ref _held);

    /// <summary>Gets when the last request arrived (null: none yet).</summary>
    public DateTimeOffset? LastRequest => Interlocked.Read(ref _lastRequestTicks) is var t and > 0 ? new DateTimeOffset(t, TimeSpan.Zero) : null;

    /// <summary>Counts a request in (and stamps its arrival); dispose the result when it is answered.</summary>
    public IDisposable Begin()
    {
        Interlocked.Exchange(ref _lastRequestTicks, time.GetUtcNow().UtcTicks);
        Interlocked.Increment(ref _pending);
        return new Scope(() => Interlocked.Decrement(ref _pending));
    }

    /// <summary>Counts a held request in; dispose the result when it is no longer held.</summary>
    public IDisposable Hold()
    {
        Interlocked.Increment(ref _held);
        return new Scope(() => Interlocked.Decrement(ref _held));
    }

    private sealed class Scope(Action end) : IDisposable
    {
        private int _done;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _done, 1) == 0)
            {
                end();
            }
        }
    }
}
