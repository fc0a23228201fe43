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
/// <param name="KeptBytesReleased">Bytes of files kept for reuse deleted for memory in all.</param>
/// <param name="LastCrossing">The last time usage crossed the threshold, and what the daemon did about it; null before any.</param>
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
    long BytesEvicted,
    long KeptBytesReleased = 0,
    MemoryCrossing? LastCrossing = null);

/// <summary>
/// One crossing of the threshold: usage crossed it between <see cref="PreviousSampleAt"/> (below) and
/// <see cref="DetectedAt"/> (the first sample above), and the daemon had made room by <see cref="RoomMadeAt"/>.
/// </summary>
/// <param name="PreviousSampleAt">The last sample below the threshold (null: the first sample was above).</param>
/// <param name="DetectedAt">The first sample above it.</param>
/// <param name="RoomMadeAt">When the last eviction of this crossing ended.</param>
/// <param name="Objects">Objects evicted for it.</param>
/// <param name="Bytes">Object bytes evicted for it.</param>
/// <param name="KeptBytesReleased">Kept files' bytes deleted for it.</param>
public sealed record MemoryCrossing(DateTimeOffset? PreviousSampleAt, DateTimeOffset DetectedAt, DateTimeOffset RoomMadeAt, int Objects, long Bytes, long KeptBytesReleased)
{
    /// <summary>Gets the milliseconds from the first sample above the threshold to the end of the eviction.</summary>
    public double ReactionMs => (RoomMadeAt - DetectedAt).TotalMilliseconds;

    /// <summary>Gets the most milliseconds usage may have been above the threshold before the daemon saw it (one sample interval).</summary>
    public double? UnseenMs => PreviousSampleAt is { } previous ? (DetectedAt - previous).TotalMilliseconds : null;
}
