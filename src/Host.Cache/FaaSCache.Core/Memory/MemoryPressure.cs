namespace FaaSCache.Memory;

/// <summary>One measurement of the app's memory against its limit.</summary>
/// <param name="LimitBytes">The memory limit.</param>
/// <param name="Source">Where the limit came from.</param>
/// <param name="ManagedHeapBytes">The host's managed heap (part of its private resident bytes; shown, not added again).</param>
/// <param name="HostPrivateBytes">The host's resident bytes without shared-memory pages.</param>
/// <param name="WorkerPrivateBytes">The workers' resident bytes without shared-memory pages.</param>
/// <param name="CachedBytes">The bytes the cachelet holds.</param>
public readonly record struct MemorySample(
    long LimitBytes,
    MemoryLimitSource Source,
    long ManagedHeapBytes,
    long HostPrivateBytes,
    long WorkerPrivateBytes,
    long CachedBytes)
{
    /// <summary>Gets the functions' memory: the host's and the workers' own resident bytes.</summary>
    public long FunctionBytes => HostPrivateBytes + WorkerPrivateBytes;

    /// <summary>Gets function memory plus cached bytes.</summary>
    public long UsedBytes => FunctionBytes + CachedBytes;
}

/// <summary>§3.4's rule: when function memory plus cached bytes come within the headroom of the limit, evict down below it.</summary>
public static class MemoryPressure
{
    /// <summary>The most usage may reach: the limit less <paramref name="headroomPercent"/> of it.</summary>
    public static long Threshold(long limitBytes, int headroomPercent) => limitBytes - (limitBytes / 100 * headroomPercent);

    /// <summary>How many cached bytes to evict so that usage is below the threshold (never more than is cached); 0 when below.</summary>
    public static long BytesToFree(MemorySample sample, int headroomPercent)
    {
        long over = sample.UsedBytes - Threshold(sample.LimitBytes, headroomPercent);
        return over <= 0 ? 0 : Math.Min(over, sample.CachedBytes);
    }
}
