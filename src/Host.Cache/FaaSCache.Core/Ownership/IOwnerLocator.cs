namespace FaaSCache.Ownership;

/// <summary>
/// Answers "which cachelet owns key K" (§3.2: owners by consistent hashing) and "who are the members now".
/// Implementations must be safe to call concurrently with membership changes: a look-up sees the old or
/// the new ring, never a torn one.
/// </summary>
public interface IOwnerLocator
{
    /// <summary>Raised after the ring has been replaced with one that has a different member set.</summary>
    event EventHandler<RingChangedEventArgs>? RingChanged;

    /// <summary>
    /// Raised when <see cref="HoldsLease"/> changes: lost when this instance could not renew its membership heartbeat
    /// in time (the others may have removed it and moved its keys), held again once it renewed (or rejoined).
    /// </summary>
    event EventHandler<LeaseChangedEventArgs>? LeaseChanged;

    /// <summary>
    /// Gets a value indicating whether this instance's membership is current: its last heartbeat is recent enough that no
    /// other member can have removed it. While false, its ring may be stale and it must not act as any key's owner.
    /// </summary>
    bool HoldsLease { get; }

    /// <summary>Gets the id of the local cachelet (this host instance).</summary>
    string SelfId { get; }

    /// <summary>Gets the current ring (a snapshot: later changes do not change it).</summary>
    ConsistentHashRing Current { get; }

    /// <summary>Returns the id of the member that owns <paramref name="key"/>.</summary>
    string GetOwner(string key);
}

/// <summary>Extension helpers over <see cref="IOwnerLocator"/>.</summary>
public static class OwnerLocatorExtensions
{
    /// <summary>True when the local cachelet owns <paramref name="key"/> under the current ring.</summary>
    public static bool IsLocalOwner(this IOwnerLocator locator, string key)
        => string.Equals(locator.GetOwner(key), locator.SelfId, StringComparison.Ordinal);

    /// <summary>The current members other than this cachelet.</summary>
    public static IEnumerable<string> Others(this IOwnerLocator locator)
        => locator.Current.Members.Where(m => !string.Equals(m, locator.SelfId, StringComparison.Ordinal));
}

/// <summary>Describes a change of <see cref="IOwnerLocator.HoldsLease"/>.</summary>
public sealed class LeaseChangedEventArgs(bool held) : EventArgs
{
    /// <summary>Gets a value indicating whether the lease is held now.</summary>
    public bool Held { get; } = held;
}
