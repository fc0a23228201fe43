namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// A host pod's memory: the <c>/dev/shm</c> emptyDir holds the cache (host.json's capacityBytes) and the worker's output
/// maps (half as much again), and counts against the container's limit, which adds what the host and worker processes use.
/// </summary>
public sealed record PodMemory(long ShmBytes, long LimitBytes)
{
    /// <summary>A mebibyte.</summary>
    public const long Mi = 1L << 20;

    /// <summary>What the host and its worker use beside the shared memory (the container's memory request too).</summary>
    public const long ProcessBytes = 512 * Mi;

    /// <summary>The memory of a pod whose cache holds <paramref name="capacityBytes"/> (host.json's; null when unset).</summary>
    public static PodMemory For(long? capacityBytes)
    {
        if (capacityBytes is { } capacity)
        {
            return Around(capacity);
        }

        // Unset, the host takes a quarter of the memory available to it, at least 64 MiB (FaaSCacheOptions'
        // EffectiveCapacityBytes), and in a pod that is at most the container's limit, which follows from the capacity:
        // the fixed point of the two, from below (the largest the host's default can become).
        PodMemory memory = Around(64 * Mi);
        for (int i = 0; i < 64; i++)
        {
            PodMemory next = Around(Math.Max(64 * Mi, memory.LimitBytes / 4));
            if (next == memory)
            {
                break;
            }

            memory = next;
        }

        return memory;
    }

    /// <summary><paramref name="bytes"/> (a whole number of MiB) as a Kubernetes quantity.</summary>
    public static string Mebibytes(long bytes) => (bytes / Mi).ToString(CultureInfo.InvariantCulture) + "Mi";

    // The capacity plus 50% for the worker's output maps, rounded up to a MiB; the limit adds the processes' own.
    private static PodMemory Around(long capacity)
    {
        long shm = checked((capacity * 3 + (2 * Mi) - 1) / (2 * Mi)) * Mi;
        return new PodMemory(shm, shm + ProcessBytes);
    }
}
