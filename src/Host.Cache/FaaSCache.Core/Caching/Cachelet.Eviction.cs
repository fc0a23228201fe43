using FaaSCache.Caching.Index;

namespace FaaSCache.Caching;

/// <summary>§3.4: capacity, eviction order, TTL, kept by <see cref="CacheIndex{TKey, TEntry}"/>; here only what the cachelet adds (statistics, metrics, maps to delete). Runs under <c>_gate</c>.</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Makes room for <paramref name="size"/> bytes and reserves them; false (evicting nothing) when the
    /// object cannot be cached because what could be evicted would not free enough.
    /// </summary>
    private bool TryReserveLocked(long size, List<CacheEntry> dead)
    {
        // The shared-memory directories' own limit: an object must also fit in one of them (part of §3.4's capacity).
        long shortOfRoom = FaaSCache.SharedMemory.SharedMemoryMap.HeaderSize + size - _shm.LargestFreeBytes();
        if (_entries.TryReserve(size, _time.GetUtcNow(), shortOfRoom) is not { } victims)
        {
            return false;
        }

        foreach (CacheEntry victim in victims)
        {
            // Space the directory needs now is freed now, not by the background deleter.
            victim.FreeSynchronously = shortOfRoom > 0;
            StatsLocked(victim.Key).Evictions++;
            dead.Add(victim);
        }

        if (victims.Count > 0)
        {
            Metrics.Evicted(victims.Count);
        }

        return true;
    }

    private void UnreserveLocked(long size) => _entries.Unreserve(size);

    /// <summary>Adds an entry whose bytes are already reserved, replacing any older version of the key.</summary>
    private void InsertLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (_entries.Insert(entry, _time.GetUtcNow()) is { Pinned: false } old)
        {
            dead.Add(old);
        }

        MarkIfUnsettledLocked(entry);
    }

    private void TouchLocked(CacheEntry entry) => _entries.Touch(entry);

    /// <summary>Takes an entry out of the index; its map is deleted now if nobody uses it, else on the last release.</summary>
    private void DetachLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (_entries.Detach(entry) && !entry.Pinned)
        {
            dead.Add(entry);
        }
    }

    /// <summary>
    /// With a TTL, expired objects are freed in the background (not only when read again or when room is needed):
    /// a timer on the cachelet's clock sweeps every quarter of the TTL (between 1 s and 1 min).
    /// </summary>
    private ITimer? StartExpirySweep()
    {
        if (_options.Eviction.Ttl is not TimeSpan ttl)
        {
            return null;
        }

        TimeSpan period = TimeSpan.FromTicks(Math.Clamp(ttl.Ticks / 4, TimeSpan.TicksPerSecond, TimeSpan.TicksPerMinute));
        return _time.CreateTimer(_ => SweepExpired(), null, period, period);
    }

    /// <summary>Frees every expired object that nobody uses; returns how many went.</summary>
    internal int SweepExpired()
    {
        var dead = new List<CacheEntry>();
        int expired;
        lock (_gate)
        {
            IReadOnlyList<CacheEntry> gone = _entries.Expired(_time.GetUtcNow());
            foreach (CacheEntry entry in gone)
            {
                DetachLocked(entry, dead);
            }

            expired = gone.Count;
        }

        DeleteMaps(dead);
        Metrics.Evicted(expired);
        return expired;
    }

    private bool IsExpiredLocked(CacheEntry entry) => entry.IsExpiredAt(_time.GetUtcNow());

    /// <summary>Objects in eviction order: expired ones first, then by policy; never one in use or not yet persisted.</summary>
    private IEnumerable<CacheEntry> VictimOrderLocked() => _entries.VictimOrder(_time.GetUtcNow());

    private bool IsLarge(long size) => _entries.IsLarge(size);
}
