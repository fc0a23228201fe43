namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>
/// The front door's traffic as the decisions need it: requests held or in flight now, the last request's time, and the
/// app's idle periods (from the end of a request that left none in flight to the next arrival: the hybrid histogram's
/// idle times, §3.3).
/// </summary>
public sealed class FrontDoorTraffic(TimeProvider time)
{
    private readonly Lock _gate = new();
    private int _pending;
    private int _held;
    private DateTimeOffset? _lastRequest;
    private DateTimeOffset? _idleSince;

    /// <summary>Raised (outside any lock) when a request arrives at an idle app, with the idle time it ends.</summary>
    public event EventHandler<TimeSpan>? IdleEnded;

    /// <summary>Gets the requests the front door holds or forwards now.</summary>
    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Gets the requests held for a cold start now.</summary>
    public int Held => Volatile.Read(ref _held);

    /// <summary>Gets when the last request arrived (null: none yet).</summary>
    public DateTimeOffset? LastRequest
    {
        get
        {
            lock (_gate)
            {
                return _lastRequest;
            }
        }
    }

    /// <summary>Gets when the last request that left none in flight ended (null: none yet); while requests run it is the previous idle start.</summary>
    public DateTimeOffset? IdleSince
    {
        get
        {
            lock (_gate)
            {
                return _idleSince;
            }
        }
    }

    /// <summary>Counts a request in (and stamps its arrival); dispose the result when it is answered.</summary>
    public IDisposable Begin()
    {
        TimeSpan? ended = null;
        lock (_gate)
        {
            DateTimeOffset now = time.GetUtcNow();
            _lastRequest = now;
            if (_pending++ == 0 && _idleSince is { } since)
            {
                ended = now - since;
            }
        }

        if (ended is { } idle)
        {
            IdleEnded?.Invoke(this, idle);
        }

        return new Scope(End);
    }

    /// <summary>Counts a held request in; dispose the result when it is no longer held.</summary>
    public IDisposable Hold()
    {
        Interlocked.Increment(ref _held);
        return new Scope(() => Interlocked.Decrement(ref _held));
    }

    private void End()
    {
        lock (_gate)
        {
            if (--_pending == 0)
            {
                _idleSince = time.GetUtcNow();
            }
        }
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
