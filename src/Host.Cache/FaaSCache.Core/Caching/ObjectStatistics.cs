namespace FaaSCache.Caching;

/// <summary>Per-object access statistics, the input of pre-warm and the cache-size vote (§3.3, §4).</summary>
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

    /// <summary>Gets writes.</summary>
    public long Writes { get; init; }

    /// <summary>Gets how often the object was evicted.</summary>
    public long Evictions { get; init; }

    /// <summary>Gets the mean time between accesses (reads and writes); zero before the second access.</summary>
    public TimeSpan MeanInterArrival { get; init; }

    /// <summary>Gets the time of the last access.</summary>
    public DateTimeOffset LastAccess { get; init; }

    /// <summary>Gets a value indicating whether this cachelet owns the key.</summary>
    public bool Owned { get; init; }

    /// <summary>Gets a value indicating whether the object is cached now.</summary>
    public bool Cached { get; init; }

    /// <summary>Gets the size of the cached version (0 when not cached).</summary>
    public long SizeBytes { get; init; }

    /// <summary>Gets the cached version (ETag), if cached.</summary>
    public string? Version { get; init; }

    /// <summary>Gets all accesses.</summary>
    public long Accesses => LocalHits + LocalMisses + RemoteHits + RemoteMisses + Writes;
}
