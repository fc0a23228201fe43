namespace FaaSCache.ScaleController.Instances;

/// <summary>Where an instance is in its life.</summary>
public enum InstanceState
{
    /// <summary>Launched, not ready yet: not routed, not polled.</summary>
    Starting,

    /// <summary>Serving: routed by the front door and polled for votes.</summary>
    Ready,

    /// <summary>Out of the routes, finishing its in-flight requests.</summary>
    Draining,

    /// <summary>Being stopped (SIGTERM, then kill).</summary>
    Stopping,

    /// <summary>Stopped by the controller (membership mode: gone from the membership blob).</summary>
    Stopped,

    /// <summary>Failed to start, or died.</summary>
    Failed,
}

/// <summary>
/// One instance as the controller manages it: its state, its process once launched, its last votes, and the front
/// door's count of requests in flight to it (a draining instance is closed only when that count is zero).
/// </summary>
public sealed class ManagedInstance(string id, DateTimeOffset launchedAt)
{
    private readonly Lock _gate = new();
    private int _inFlight;
    private bool _closed;

    /// <summary>Gets the instance id.</summary>
    public string Id { get; } = id;

    /// <summary>Gets when the controller launched it (or, for a member, when it says it started).</summary>
    public DateTimeOffset LaunchedAt { get; } = launchedAt;

    /// <summary>Gets or sets the state.</summary>
    public InstanceState State { get; set; } = InstanceState.Starting;

    /// <summary>Gets or sets the process, once ready.</summary>
    public ILaunchedInstance? Process { get; set; }

    /// <summary>Gets the peer address of an instance found in the membership blob (one the controller did not launch).</summary>
    public Uri? MemberEndpoint { get; init; }

    /// <summary>Gets where the instance answers GetVotes: its process's peer port, or the endpoint it listed in the membership blob.</summary>
    public Uri? PeerEndpoint => Process?.PeerEndpoint ?? MemberEndpoint;

    /// <summary>Gets or sets the last poll's answer.</summary>
    public InstanceVotes? LastVotes { get; set; }

    /// <summary>Gets or sets why it failed, when it did.</summary>
    public string? Error { get; set; }

    /// <summary>Gets or sets the cancellation of its start (a scale-in may cancel a start).</summary>
    public CancellationTokenSource Starting { get; set; } = new();

    /// <summary>Gets the requests the front door has in flight to it.</summary>
    public int InFlight => Volatile.Read(ref _inFlight);

    /// <summary>Counts one request in; false once the instance is closed (drained).</summary>
    public bool TryEnter()
    {
        lock (_gate)
        {
            if (_closed)
            {
                return false;
            }

            _inFlight++;
            return true;
        }
    }

    /// <summary>Counts one request out.</summary>
    public void Exit()
    {
        lock (_gate)
        {
            _inFlight--;
        }
    }

    /// <summary>Closes the instance to new requests if none is in flight; true when closed.</summary>
    public bool CloseIfIdle()
    {
        lock (_gate)
        {
            _closed |= _inFlight == 0;
            return _closed;
        }
    }

    /// <summary>Closes the instance whatever is in flight (the drain timed out).</summary>
    public void Close()
    {
        lock (_gate)
        {
            _closed = true;
        }
    }
}
