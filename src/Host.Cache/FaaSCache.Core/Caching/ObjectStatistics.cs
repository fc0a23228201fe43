namespace FaaSCache.Caching;

/// <summary>
/// Per-object access statistics, the input of pre-warm and the cache-size vote (§3.3, §4). Accesses by this instance's
/// own functions and accesses this cachelet served for other cachelets (as the key's owner) are counted apart.
/// </summary>
public sealed record ObjectStatistics
{
    /// <summary>Gets the key.</summary>
    public required string Key { get; init; }

    /// <summary>Gets local hits.</summary>
    public long LocalHits { get; init; }

    /// <summary>Gets local misses.</summary>
    public long LocalMisses { get; init; }

    /// <summary>Gets remote hits.</summary>
    public long RemoteHits { get; init; }

    /// <summary>Gets remote misses.</summary>
    public long RemoteMisses { get; init; }

    /// <summary>Gets reads that went to storage because the owner could not be reached.</summary>
    public long StorageFallbacks { get; init; }

    /// <summary>Gets writes by this instance's functions (a write forwarded to the owner counts here, on the writer).</summary>
    public long Writes { get; init; }

    /// <summary>Gets other cachelets' reads this cachelet served from its copy.</summary>
    public long PeerHits { get; init; }

    /// <summary>Gets other cachelets' reads this cachelet served by fetching from storage first.</summary>
    public long PeerMisses { get; init; }

    /// <summary>Gets other cachelets' writes this cachelet committed as the owner.</summary>
    public long PeerWrites { get; init; }

    /// <summary>Gets how often the object was evicted.</summary>
    public long Evictions { get; init; }

    /// <summary>Gets how often the Memory Daemon evicted the object (counted in <see cref="Evictions"/> too).</summary>
    public long MemoryEvictions { get; init; }

    /// <summary>Gets how often the object was read again after the Memory Daemon evicted it (§4's cache-size signal).</summary>
    public long ReadsAfterMemoryEviction { get; init; }

    /// <summary>Gets the mean time between accesses (reads and writes); zero before the second access.</summary>
    public TimeSpan MeanInterArrival { get; init; }

    /// <summary>Gets the time of the last access.</summary>
    public DateTimeOffset LastAccess { get; init; }

    /// <summary>Gets a value indicating whether this cachelet owns the key under the current ring.</summary>
    public bool Owned { get; init; }

    /// <summary>Gets a value indicating whether the object is cached now.</summary>
    public bool Cached { get; init; }

    /// <summary>Gets the size of the cached version (0 when not cached).</summary>
    public long SizeBytes { get; init; }

    /// <summary>Gets the cached version (ETag), if cached.</summary>
    public string? Version { get; init; }

    /// <summary>Gets the accesses of this instance's own functions.</summary>
    public long Accesses => LocalHits + LocalMisses + RemoteHits + RemoteMisses + StorageFallbacks + Writes;

    /// <summary>Gets the accesses this cachelet served for other cachelets.</summary>
    public long PeerAccesses => PeerHits + PeerMisses + PeerWrites;
}
