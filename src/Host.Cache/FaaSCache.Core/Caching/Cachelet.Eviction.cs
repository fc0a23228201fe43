using FaaSCache.Caching.Policies;

namespace FaaSCache.Caching;

/// <summary>§3.4: capacity, eviction order, TTL. Everything here runs under <c>_gate</c>.</summary>
public sealed partial class Cachelet
{
    // [owned ? 1 : 0][large ? 1 : 0], each least-recently-used first.
    private readonly LinkedList<CacheEntry>[][] _lru =
    [
        [new LinkedList<CacheEntry>(), new LinkedList<CacheEntry>()],
        [new LinkedList<CacheEntry>(), new LinkedList<CacheEntry>()],
    ];

    private long _touchClock;

    /// <summary>
    /// Makes room for <paramref name="size"/> bytes and reserves them; false (evicting nothing) when the
    /// object cannot be cached because what could be evicted would not free enough.
    /// </summary>
    private bool TryReserveLocked(long size, List<CacheEntry> dead)
    {
        if (!EvictionRules.Admits(size, CapacityBytes))
        {
            return false;
        }

        // The shared-memory directories' own limit: an object must also fit in one of them (part of §3.4's capacity).
        long shortOfRoom = FaaSCache.SharedMemory.SharedMemoryMap.HeaderSize + size - _shm.LargestFreeBytes();
        long excess = Math.Max(_bytesCached + size - CapacityBytes, shortOfRoom);
        if (excess > 0)
        {
            if (EvictionRules.PickVictims(VictimOrderLocked(), excess, static e => e.Size) is not { } victims)
            {
                return false;
            }

            foreach (CacheEntry victim in victims)
            {
                // Space the directory needs now is freed now, not by the background deleter.
                victim.FreeSynchronously = shortOfRoom > 0;
                StatsLocked(victim.Key).Evictions++;
                DetachLocked(victim, dead);
            }

            Metrics.Evicted(victims.Count);
        }

        _bytesCached += size;
        return true;
    }

    private void UnreserveLocked(long size) => _bytesCached -= size;

    /// <summary>Adds an entry whose bytes are already reserved, replacing any older version of the key.</summary>
    private void InsertLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (_index.TryGetValue(entry.Key, out CacheEntry? old))
        {
            DetachLocked(old, dead);
        }

        _index[entry.Key] = entry;
        if (EvictionRules.ExpiresAt(_options.Eviction, _time.GetUtcNow()) is { } expiresAt)
        {
            entry.ExpiresAt = expiresAt;
        }

        entry.LastTouch = ++_touchClock;
        entry.Node = ListOf(entry).AddLast(entry);
        MarkIfUnsettledLocked(entry);
    }

    private void TouchLocked(CacheEntry entry)
    {
        entry.LastTouch = ++_touchClock;
        if (entry.Node is { } node)
        {
            LinkedList<CacheEntry> list = ListOf(entry);
            list.Remove(node);
            list.AddLast(node);
        }
    }

    /// <summary>Takes an entry out of the index; its map is deleted now if nobody uses it, else on the last release.</summary>
    private void DetachLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (entry.Detached)
        {
            return;
        }

        entry.Detached = true;
        if (_index.TryGetValue(entry.Key, out CacheEntry? current) && ReferenceEquals(current, entry))
        {
            _index.Remove(entry.Key);
        }

        if (entry.Node is { } node)
        {
            ListOf(entry).Remove(node);
            entry.Node = null;
        }

        _bytesCached -= entry.Size;
        if (!entry.Pinned)
        {
            dead.Add(entry);
        }
    }

    /// <summary>Moves an entry to the eviction list of its new ownership, keeping that list in last-touch order.</summary>
    private void SetOwnedLocked(CacheEntry entry, bool owned)
    {
        if (entry.Node is not { } node)
        {
            entry.Owned = owned;
            return;
        }

        ListOf(entry).Remove(node);
        entry.Owned = owned;
        LinkedList<CacheEntry> list = ListOf(entry);
        LinkedListNode<CacheEntry>? before = list.Last;
        while (before is not null && before.Value.LastTouch > entry.LastTouch)
        {
            before = before.Previous;
        }

        if (before is null)
        {
            list.AddFirst(node);
        }
        else
        {
            list.AddAfter(before, node);
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
        int expired = 0;
        lock (_gate)
        {
            foreach (CacheEntry entry in _index.Values.Where(e => !e.Pinned && IsExpiredLocked(e)).ToList())
            {
                DetachLocked(entry, dead);
                expired++;
            }
        }

        DeleteMaps(dead);
        Metrics.Evicted(expired);
        return expired;
    }

    private bool IsExpiredLocked(CacheEntry entry) => EvictionRules.IsExpired(entry.ExpiresAt, _time.GetUtcNow()) && !entry.Dirty;

    private LinkedList<CacheEntry> ListOf(CacheEntry e) => _lru[e.Owned ? 1 : 0][e.Large ? 1 : 0];

    /// <summary>Objects in eviction order: expired ones first, then by policy; never one in use or not yet persisted.</summary>
    private IEnumerable<CacheEntry> VictimOrderLocked()
        => EvictionRules.VictimOrder(_options.Eviction, _lru, static e => e.LastTouch, IsExpiredLocked, static e => !e.Pinned);

    private bool IsLarge(long size) => EvictionRules.IsLarge(_options.Eviction, size);
}
