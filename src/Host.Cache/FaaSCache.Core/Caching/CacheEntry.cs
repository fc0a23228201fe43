using FaaSCache.Caching.Index;

namespace FaaSCache.Caching;

/// <summary>A cached object: its map and what the cachelet's paths need; every field is guarded by the cachelet's lock.</summary>
internal sealed class CacheEntry(string key, string version, SharedMemoryMap map, bool owned, bool large)
    : IndexedEntry<string, CacheEntry>(key, owned, large)
{
    public string Version { get; set; } = version;

    public SharedMemoryMap Map { get; } = map;

    public override long Size => Map.ContentLength;

    /// <summary>Leases, active references of IFunctionDataCache callers and a pending write-back.</summary>
    public int RefCount { get; set; }

    /// <summary>Written under async persistence and not yet in storage.</summary>
    public bool Dirty { get; set; }

    /// <summary>Evicted to make room in a shared-memory directory: its file is deleted at once, not in the background.</summary>
    public bool FreeSynchronously { get; set; }

    /// <summary>Gets or sets whether the copy must be checked against storage before it is served (writes may have gone elsewhere).</summary>
    public bool Suspect { get; set; }

    /// <summary>Gets or sets the cachelet's write sequence when a write put this copy in (0: a read did).</summary>
    public long WriteSequence { get; set; }

    public override bool Pinned => RefCount > 0 || Dirty;

    /// <summary>Gets whether a TTL frees it: an object not yet persisted stays until it is.</summary>
    public override bool CanExpire => !Dirty;
}
