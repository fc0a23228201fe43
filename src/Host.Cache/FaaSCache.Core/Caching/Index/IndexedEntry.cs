namespace FaaSCache.Caching.Index;

/// <summary>
/// What <see cref="CacheIndex{TKey, TEntry}"/> keeps of one cached object: its key, size, ownership, eviction-list place,
/// last touch and expiry. The cachelet's entries (a shared-memory map) and the simulator's (a size and a version) derive
/// from it, so both evict by the same code.
/// </summary>
/// <typeparam name="TKey">The key's type.</typeparam>
/// <typeparam name="TEntry">The deriving entry type.</typeparam>
public abstract class IndexedEntry<TKey, TEntry>
    where TKey : notnull
    where TEntry : IndexedEntry<TKey, TEntry>
{
    /// <summary>Initializes a new instance of the <see cref="IndexedEntry{TKey, TEntry}"/> class.</summary>
    /// <param name="key">The object's key.</param>
    /// <param name="owned">Whether this instance owns the key on the current ring.</param>
    /// <param name="large">Whether the object is large under the eviction policy (<see cref="CacheIndex{TKey, TEntry}.IsLarge"/>).</param>
    protected IndexedEntry(TKey key, bool owned, bool large)
    {
        Key = key;
        Owned = owned;
        Large = large;
    }

    /// <summary>Gets the key.</summary>
    public TKey Key { get; }

    /// <summary>Gets the bytes the object takes.</summary>
    public abstract long Size { get; }

    /// <summary>Gets whether this instance owns the key under the current ring (the index moves it when that changes).</summary>
    public bool Owned { get; internal set; }

    /// <summary>Gets whether the object is large under the eviction policy.</summary>
    public bool Large { get; }

    /// <summary>Gets when the object's TTL runs out (null: never).</summary>
    public DateTimeOffset? ExpiresAt { get; internal set; }

    /// <summary>Gets the index's touch clock at the object's last insert or touch.</summary>
    public long LastTouch { get; internal set; }

    /// <summary>Gets whether the entry left the index (evicted, replaced or removed).</summary>
    public bool Detached { get; internal set; }

    /// <summary>Gets whether the entry may not be evicted now (in use, or not yet persisted).</summary>
    public virtual bool Pinned => false;

    /// <summary>Gets whether a TTL that ran out frees the entry (an object not yet persisted never expires).</summary>
    public virtual bool CanExpire => true;

    internal LinkedListNode<TEntry>? Node { get; set; }

    /// <summary>Whether the TTL ran out at <paramref name="now"/> and frees the entry.</summary>
    public bool IsExpiredAt(DateTimeOffset now) => CanExpire && Policies.EvictionRules.IsExpired(ExpiresAt, now);
}
