namespace FaaSCache.Caching;

/// <summary>
/// §3.4's evictions that no read asks for: the Memory Daemon's, which free the cache's memory when the function's grows,
/// and the TTL sweep, which frees expired objects in the background (the timer is this part's). Evictions that make room
/// for a new object are the index's (<see cref="CacheletCore.TryReserveLocked"/>).
/// </summary>
internal sealed class Evictions : IAsyncDisposable
{
    private readonly CacheletCore _core;
    private readonly ITimer? _sweep;

    public Evictions(CacheletCore core)
    {
        _core = core;
        // With a TTL, expired objects are freed in the background (not only when read again or when room is needed): a
        // timer on the cachelet's clock sweeps every quarter of the TTL (between 1 s and 1 min).
        if (core.Options.Eviction.Ttl is TimeSpan ttl)
        {
            TimeSpan period = TimeSpan.FromTicks(Math.Clamp(ttl.Ticks / 4, TimeSpan.TicksPerSecond, TimeSpan.TicksPerMinute));
            _sweep = core.Time.CreateTimer(_ => SweepExpired(), null, period, period);
        }
    }

    /// <summary>
    /// Frees at least <paramref name="bytes"/> of the cache's memory, or all it can: first the files kept for reuse (no
    /// object is lost for them), then objects in eviction-policy order, never one in use or not yet persisted, whose files
    /// are deleted, not kept, while the pressure lasts. Each evicted key is remembered, so a later read of it counts as a
    /// read after a memory eviction (the cache-size voter's signal that the working set no longer fits beside the functions).
    /// </summary>
    public MemoryEvictionResult ForMemory(long bytes)
    {
        long released = _core.Shm.ReleaseKept(SharedMemoryStore.RecycleMaxIdle);
        var dead = new List<CacheEntry>();
        int objects = 0, skipped;
        long freed = released;
        lock (_core.Gate)
        {
            foreach (CacheEntry victim in _core.Entries.VictimOrder(_core.Time.GetUtcNow()).ToList())
            {
                if (freed >= bytes)
                {
                    break;
                }

                AccessStatistics.StatsState s = _core.StatsLocked(victim.Key);
                s.Evictions++;
                s.MemoryEvictions++;
                s.AwaitingReadAfterMemoryEviction = true;
                freed += victim.Size;
                objects++;
                _core.DetachLocked(victim, dead);
            }

            skipped = _core.Entries.Entries.Count(e => e.Pinned);
        }

        _core.DeleteMaps(dead);
        _core.Metrics.Evicted(objects);
        _core.Metrics.EvictedForMemory(objects, freed - released);
        return new MemoryEvictionResult(objects, freed - released, skipped, released);
    }

    /// <summary>Frees every expired object that nobody uses; returns how many went.</summary>
    public int SweepExpired()
    {
        var dead = new List<CacheEntry>();
        int expired;
        lock (_core.Gate)
        {
            IReadOnlyList<CacheEntry> gone = _core.Entries.Expired(_core.Time.GetUtcNow());
            foreach (CacheEntry entry in gone)
            {
                _core.DetachLocked(entry, dead);
            }

            expired = gone.Count;
        }

        _core.DeleteMaps(dead);
        _core.Metrics.Evicted(expired);
        return expired;
    }

    /// <summary>Stops the sweep.</summary>
    public ValueTask DisposeAsync() => _sweep?.DisposeAsync() ?? ValueTask.CompletedTask;
}
