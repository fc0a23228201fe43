namespace FaaSCache.Caching;

/// <summary>The cachelet's admin face: what operators, banners, admin endpoints and statistics readers see and do.</summary>
public interface ICacheAdmin
{
    /// <summary>Gets this instance's id.</summary>
    string InstanceId { get; }

    /// <summary>Gets the options in force.</summary>
    FaaSCacheOptions Options { get; }

    /// <summary>Gets the capacity in bytes.</summary>
    long CapacityBytes { get; }

    /// <summary>Gets the number of cached objects.</summary>
    int Count { get; }

    /// <summary>Gets the asynchronous writes not yet in storage.</summary>
    long PendingWrites { get; }

    /// <summary>Gets the metrics.</summary>
    CacheletMetrics Metrics { get; }

    /// <summary>Gets the shared-memory store.</summary>
    SharedMemoryStore SharedMemory { get; }

    /// <summary>Gets the storage.</summary>
    IBlobStore Storage { get; }

    /// <summary>True when <paramref name="key"/> is cached (any version).</summary>
    bool Contains(string key);

    /// <summary>Removes <paramref name="key"/> from the cache (dirty objects stay).</summary>
    bool Remove(string key);

    /// <summary>Statistics of one key, or null when it was never accessed.</summary>
    ObjectStatistics? GetStatistics(string key);

    /// <summary>Statistics of every tracked key.</summary>
    IReadOnlyList<ObjectStatistics> GetAllStatistics();
}
