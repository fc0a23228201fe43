using FaaSCache.Options;

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

    /// <summary>Makes room for <paramref name="size"/> bytes and reserves them; false when the object cannot be cached.</summary>
    private bool TryReserveLocked(long size, List<CacheEntry> dead)
    {
        if (size > CapacityBytes)
        {
            return false;
        }

        int evicted = 0;
        while (_bytesCached + size > CapacityBytes)
        {
            CacheEntry? victim = NextVictimLocked();
            if (victim is null)
            {
                Metrics.Evicted(evicted);
                return false;
            }

            StatsLocked(victim.Key).Evictions++;
            DetachLocked(victim, dead);
            evicted++;
        }

        Metrics.Evicted(evicted);
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
        if (_options.Eviction.Ttl is TimeSpan ttl)
        {
            entry.ExpiresAt = _time.GetUtcNow() + ttl;
        }

        entry.LastTouch = ++_touchClock;
        entry.Node = ListOf(entry).AddLast(entry);
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

    private bool IsExpiredLocked(CacheEntry entry) => entry.ExpiresAt is { } at && _time.GetUtcNow() >= at && !entry.Dirty;

    private LinkedList<CacheEntry> ListOf(CacheEntry e) => _lru[e.Owned ? 1 : 0][e.Large ? 1 : 0];

    /// <summary>The next object to evict: expired ones first, then by policy; never one in use or not yet persisted.</summary>
    private CacheEntry? NextVictimLocked()
    {
        if (_options.Eviction.Ttl is not null)
        {
            foreach (LinkedList<CacheEntry>[] byOwner in _lru)
            {
                foreach (LinkedList<CacheEntry> list in byOwner)
                {
                    CacheEntry? expired = list.FirstOrDefault(e => !e.Pinned && IsExpiredLocked(e));
                    if (expired is not null)
                    {
                        return expired;
                    }
                }
            }
        }

        if (_options.Eviction.Policy == EvictionPolicy.Size)
        {
            // Non-owned large, non-owned small, owned large, then owned small (LRU within each).
            return FirstUnpinned(_lru[0][1]) ?? FirstUnpinned(_lru[0][0]) ?? FirstUnpinned(_lru[1][1]) ?? FirstUnpinned(_lru[1][0]);
        }

        // LRU among objects this cachelet does not own, then among owned ones.
        return OlderOf(FirstUnpinned(_lru[0][0]), FirstUnpinned(_lru[0][1]))
            ?? OlderOf(FirstUnpinned(_lru[1][0]), FirstUnpinned(_lru[1][1]));
    }

    private static CacheEntry? FirstUnpinned(LinkedList<CacheEntry> list)
    {
        for (LinkedListNode<CacheEntry>? n = list.First; n is not null; n = n.Next)
        {
            if (!n.Value.Pinned)
            {
                return n.Value;
            }
        }

        return null;
    }

    private static CacheEntry? OlderOf(CacheEntry? a, CacheEntry? b)
        => a is null ? b : b is null ? a : a.LastTouch <= b.LastTouch ? a : b;

    private bool IsLarge(long size) => size > _options.Eviction.SizeThresholdBytes;
}
