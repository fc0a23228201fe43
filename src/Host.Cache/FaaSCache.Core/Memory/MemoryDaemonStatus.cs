namespace FaaSCache.Memory;

/// <summary>The Memory Daemon's state for <c>GET /admin/host/status</c>: the last sample and what it evicted so far.</summary>
/// <param name="LimitBytes">The memory limit.</param>
/// <param name="LimitSource">configured, cgroup or machine.</param>
/// <param name="HeadroomPercent">The headroom it keeps.</param>
/// <param name="ThresholdBytes">Usage above which it evicts.</param>
/// <param name="ManagedHeapBytes">The host's managed heap at the last sample.</param>
/// <param name="HostPrivateBytes">The host's own resident bytes at the last sample.</param>
/// <param name="WorkerPrivateBytes">The workers' own resident bytes at the last sample.</param>
/// <param name="CachedBytes">Cached bytes at the last sample.</param>
/// <param name="Samples">Samples taken.</param>
/// <param name="EvictionRounds">Samples that evicted.</param>
/// <param name="ObjectsEvicted">Objects evicted in all.</param>
/// <param name="BytesEvicted">Bytes freed in all.</param>
public sealed record MemoryDaemonStatus(
    long LimitBytes,
    string LimitSource,
    int HeadroomPercent,
    long ThresholdBytes,
    long ManagedHeapBytes,
    long HostPrivateBytes,
    long WorkerPrivateBytes,
    long CachedBytes,
    long Samples,
    long EvictionRounds,
    long ObjectsEvicted,
    long BytesEvicted);
