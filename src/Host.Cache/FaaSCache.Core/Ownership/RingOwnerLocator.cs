namespace FaaSCache.Ownership;

/// <summary>
/// The <see cref="IOwnerLocator"/>: a <see cref="ConsistentHashRing"/> that the membership daemon replaces as
/// cachelets join and leave. Without membership it holds this instance alone, which then owns every key.
/// </summary>
/// <remarks>
/// The ring is immutable and held in one volatile reference: <see cref="Update"/> builds a new
/// ring and swaps the reference, so a concurrent look-up sees the old ring or the new one, never a
/// mix. Updates are serialized, and <see cref="RingChanged"/> is raised once per swap, in swap order,
/// on the updating thread (handlers should be quick; they run before <see cref="Update"/> returns).
/// </remarks>
public sealed class RingOwnerLocator : IOwnerLocator
{
    private readonly Lock _updateGate = new();
    private volatile ConsistentHashRing _ring;
    private volatile bool _holdsLease = true;

    /// <summary>Creates a locator over a ring of <paramref name="members"/>.</summary>
    /// <param name="selfId">Id of the local cachelet.</param>
    /// <param name="members">Initial member ids.</param>
    /// <param name="virtualNodes">Points per member; kept for every later <see cref="Update"/>.</param>
    public RingOwnerLocator(string selfId, IEnumerable<string> members, int virtualNodes = ConsistentHashRing.DefaultVirtualNodes)
        : this(selfId, new ConsistentHashRing(members, virtualNodes))
    {
    }

    /// <summary>Creates a locator over <paramref name="initial"/>.</summary>
    /// <param name="selfId">Id of the local cachelet.</param>
    /// <param name="initial">The starting ring; its <see cref="ConsistentHashRing.VirtualNodes"/> is kept for every later <see cref="Update"/>.</param>
    public RingOwnerLocator(string selfId, ConsistentHashRing initial)
    {
        ArgumentException.ThrowIfNullOrEmpty(selfId);
        ArgumentNullException.ThrowIfNull(initial);
        SelfId = selfId;
        _ring = initial;
    }

    /// <inheritdoc />
    public event EventHandler<RingChangedEventArgs>? RingChanged;

    /// <inheritdoc />
    public event EventHandler<LeaseChangedEventArgs>? LeaseChanged;

    /// <inheritdoc />
    public string SelfId { get; }

    /// <inheritdoc />
    /// <remarks>True until a membership daemon says otherwise: a single instance always holds it.</remarks>
    public bool HoldsLease => _holdsLease;

    /// <inheritdoc />
    public ConsistentHashRing Current => _ring;

    /// <summary>A locator for a single instance: <paramref name="selfId"/> owns every key until members join.</summary>
    public static RingOwnerLocator SingleInstance(string selfId, int virtualNodes = ConsistentHashRing.DefaultVirtualNodes)
        => new(selfId, [selfId], virtualNodes);

    /// <inheritdoc />
    /// <exception cref="InvalidOperationException">The current ring has no members.</exception>
    public string GetOwner(string key) => _ring.GetOwner(key);

    /// <summary>Sets <see cref="HoldsLease"/> (the membership daemon's job) and raises <see cref="LeaseChanged"/> when it changed.</summary>
    /// <returns>True when the value changed.</returns>
    public bool SetLease(bool held)
    {
        lock (_updateGate)
        {
            if (_holdsLease == held)
            {
                return false;
            }

            _holdsLease = held;
            LeaseChanged?.Invoke(this, new LeaseChangedEventArgs(held));
            return true;
        }
    }

    /// <summary>
    /// Replaces the ring with one over <paramref name="members"/> (same virtual-node count) and
    /// raises <see cref="RingChanged"/>. Does nothing when the member set is unchanged.
    /// </summary>
    /// <returns>True when the ring was replaced.</returns>
    public bool Update(IEnumerable<string> members)
    {
        ArgumentNullException.ThrowIfNull(members);
        lock (_updateGate)
        {
            var previous = _ring;
            var materialized = members as IReadOnlyCollection<string> ?? [.. members];
            if (previous.HasSameMembers(materialized))
            {
                return false;
            }

            var next = new ConsistentHashRing(materialized, previous.VirtualNodes);
            _ring = next;
            RingChanged?.Invoke(this, new RingChangedEventArgs(previous, next));
            return true;
        }
    }
}

/// <summary>Describes a ring replacement: the rings before and after, and which members came and went.</summary>
public sealed class RingChangedEventArgs : EventArgs
{
    /// <summary>Creates the event data for a change from <paramref name="previous"/> to <paramref name="current"/>.</summary>
    public RingChangedEventArgs(ConsistentHashRing previous, ConsistentHashRing current)
    {
        ArgumentNullException.ThrowIfNull(previous);
        ArgumentNullException.ThrowIfNull(current);
        Previous = previous;
        Current = current;
        Added = [.. current.Members.Where(m => !previous.Contains(m))];
        Removed = [.. previous.Members.Where(m => !current.Contains(m))];
    }

    /// <summary>Gets the ring before the change.</summary>
    public ConsistentHashRing Previous { get; }

    /// <summary>Gets the ring after the change.</summary>
    public ConsistentHashRing Current { get; }

    /// <summary>Gets the members in <see cref="Current"/> but not in <see cref="Previous"/>, in ordinal order.</summary>
    public IReadOnlyList<string> Added { get; }

    /// <summary>Gets the members in <see cref="Previous"/> but not in <see cref="Current"/>, in ordinal order.</summary>
    public IReadOnlyList<string> Removed { get; }
}
