namespace FaaSCache.Caching;

/// <summary>What one memory-pressure eviction freed.</summary>
/// <param name="Objects">Objects evicted.</param>
/// <param name="Bytes">Bytes freed.</param>
/// <param name="Skipped">Cached objects left because they are in use or not yet persisted.</param>
/// <param name="KeptBytesReleased">Bytes of deleted maps' files kept for reuse that were deleted first.</param>
public readonly record struct MemoryEvictionResult(int Objects, long Bytes, int Skipped, long KeptBytesReleased = 0);

/// <summary>§3.4: the Memory Daemon's evictions, in the policy's order, never of an object in use or not yet persisted.</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Gets the memory the cache holds: the cached objects, and the files of deleted maps kept for reuse (their tmpfs
    /// pages are charged to the app as the objects' were, until deleted).
    /// </summary>
    public long CacheMemoryBytes => BytesCached + _shm.KeptBytes;

    /// <summary>
    /// Frees at least <paramref name="bytes"/> of the cache's memory, or all it can: first the files kept for reuse (no
    /// object is lost for them), then objects in eviction-policy order, whose files are deleted, not kept, while the
    /// pressure lasts. Each evicted key is remembered, so a later read of it counts as a read after a memory eviction
    /// (the cache-size voter's signal that the working set no longer fits beside the functions).
    /// </summary>
    public MemoryEvictionResult EvictForMemory(long bytes)
    {
        long released = _shm.ReleaseKept(FaaSCache.SharedMemory.SharedMemoryStore.RecycleMaxIdle);
        var dead = new List<CacheEntry>();
        int objects = 0, skipped;
        long freed = released;
        lock (_gate)
        {
            foreach (CacheEntry victim in VictimOrderLocked().ToList())
            {
                if (freed >= bytes)
                {
                    break;
                }

                AccessStatistics.StatsState s = StatsLocked(victim.Key);
                s.Evictions++;
                s.MemoryEvictions++;
                s.AwaitingReadAfterMemoryEviction = true;
                freed += victim.Size;
                objects++;
                DetachLocked(victim, dead);
            }

            skipped = _entries.Entries.Count(e => e.Pinned);
        }

        DeleteMaps(dead);
        Metrics.Evicted(objects);
        Metrics.EvictedForMemory(objects, freed - released);
        return new MemoryEvictionResult(objects, freed - released, skipped, released);
    }
}
