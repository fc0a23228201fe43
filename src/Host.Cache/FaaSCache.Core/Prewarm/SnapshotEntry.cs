namespace FaaSCache.Prewarm;

/// <summary>
/// One object's line in an unload snapshot (§3.3): its size, version and counts by access type, this instance's own
/// functions' accesses apart from the accesses it served for other cachelets as the key's owner.
/// </summary>
public sealed record SnapshotEntry
{
    /// <summary>Gets the object key (<c>container/blobName</c>).</summary>
    public required string Key { get; init; }

    /// <summary>Gets the size of the cached version in bytes (0 when it was not cached at the snapshot).</summary>
    public long SizeBytes { get; init; }

    /// <summary>Gets the version (ETag) cached at snapshot time, if any.</summary>
    public string? Version { get; init; }

    /// <summary>Gets the local and remote hits by this instance's functions.</summary>
    public long OwnHits { get; init; }

    /// <summary>Gets the local and remote misses and storage fallbacks by this instance's functions.</summary>
    public long OwnMisses { get; init; }

    /// <summary>Gets the writes by this instance's functions.</summary>
    public long OwnWrites { get; init; }

    /// <summary>Gets the reads of other cachelets served from this cachelet's copy.</summary>
    public long PeerHits { get; init; }

    /// <summary>Gets the reads of other cachelets served by fetching from storage first.</summary>
    public long PeerMisses { get; init; }

    /// <summary>Gets the writes of other cachelets committed by this cachelet as the owner.</summary>
    public long PeerWrites { get; init; }

    /// <summary>Gets the mean time between accesses; zero before the second access.</summary>
    public TimeSpan MeanInterArrival { get; init; }

    /// <summary>Gets the time of the last access.</summary>
    public DateTimeOffset LastAccess { get; init; }
}
