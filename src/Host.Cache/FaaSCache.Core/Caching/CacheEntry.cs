using FaaSCache.SharedMemory;

namespace FaaSCache.Caching;

/// <summary>A cached object; every field is guarded by the cachelet's lock.</summary>
internal sealed class CacheEntry(string key, string version, SharedMemoryMap map, bool owned, bool large)
{
    public string Key { get; } = key;

    public string Version { get; set; } = version;

    public SharedMemoryMap Map { get; } = map;

    public long Size => Map.ContentLength;

    /// <summary>Gets or sets whether this cachelet owns the key under the current ring (re-derived when the ring changes).</summary>
    public bool Owned { get; set; } = owned;

    public bool Large { get; } = large;

    public DateTimeOffset? ExpiresAt { get; set; }

    /// <summary>Leases, active references of IFunctionDataCache callers and a pending write-back.</summary>
    public int RefCount { get; set; }

    /// <summary>Written under async persistence and not yet in storage.</summary>
    public bool Dirty { get; set; }

    /// <summary>Out of the index (evicted, replaced or removed); the map goes when the last reference does.</summary>
    public bool Detached { get; set; }

    public long LastTouch { get; set; }

    /// <summary>Evicted to make room in a shared-memory directory: its file is deleted at once, not in the background.</summary>
    public bool FreeSynchronously { get; set; }

    public LinkedListNode<CacheEntry>? Node { get; set; }

    /// <summary>Gets or sets whether the copy must be checked against storage before it is served (writes may have gone elsewhere).</summary>
    public bool Suspect { get; set; }

    /// <summary>Gets or sets the cachelet's write sequence when a write put this copy in (0: a read did).</summary>
    public long WriteSequence { get; set; }

    public bool Pinned => RefCount > 0 || Dirty;
}
