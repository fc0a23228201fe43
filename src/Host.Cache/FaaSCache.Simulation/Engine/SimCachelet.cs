using FaaSCache.Caching.Policies;
using FaaSCache.Options;
using FaaSCache.Prewarm;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// One simulated cachelet: the bookkeeping of <c>Cachelet.Eviction.cs</c> (four LRU lists by owned/large, a touch
/// clock, reserve-then-evict) with every decision taken by <see cref="EvictionRules"/>, the cachelet's own policy code.
/// Objects are sizes and versions only; nothing is pinned (an access completes before the next one starts).
/// </summary>
internal sealed class SimCachelet
{
    private readonly EvictionOptions _eviction;
    private readonly Dictionary<int, SimEntry> _index = [];
    private readonly Dictionary<int, KeyStats> _stats = [];

    // The cache-size voter's inputs since its last query: evictions by key and accesses (own and peers').
    private readonly Dictionary<int, int> _evictedSinceSample = [];
    private long _accessesSinceSample;

    // [owned ? 1 : 0][large ? 1 : 0], each least-recently-used first, as in the cachelet.
    private readonly LinkedList<SimEntry>[][] _lru =
    [
        [new LinkedList<SimEntry>(), new LinkedList<SimEntry>()],
        [new LinkedList<SimEntry>(), new LinkedList<SimEntry>()],
    ];

    private long _touchClock;

    public SimCachelet(EvictionOptions eviction, long capacityBytes)
    {
        _eviction = eviction;
        CapacityBytes = capacityBytes;
    }

    public long CapacityBytes { get; }

    public long BytesCached { get; private set; }

    public long Evictions { get; private set; }

    public int Count => _index.Count;

    public bool Admits(long size) => EvictionRules.Admits(size, CapacityBytes);

    /// <summary>The entry of <paramref name="key"/> at <paramref name="version"/>, touched; a stale or expired copy is dropped.</summary>
    public bool TryHit(int key, int version, DateTimeOffset now)
    {
        if (!_index.TryGetValue(key, out SimEntry? entry))
        {
            return false;
        }

        if (entry.Version != version || EvictionRules.IsExpired(entry.ExpiresAt, now))
        {
            Remove(key);
            return false;
        }

        entry.LastTouch = ++_touchClock;
        LinkedList<SimEntry> list = ListOf(entry);
        list.Remove(entry.Node!);
        list.AddLast(entry.Node!);
        return true;
    }

    public bool Contains(int key) => _index.ContainsKey(key);

    /// <summary>Caches <paramref name="key"/>, evicting by policy; false (nothing evicted) when it cannot fit.</summary>
    public bool Insert(int key, long size, int version, bool owned, DateTimeOffset now, bool evict = true)
    {
        Remove(key);
        if (!Admits(size))
        {
            return false;
        }

        long excess = BytesCached + size - CapacityBytes;
        if (excess > 0)
        {
            if (!evict)
            {
                return false;
            }

            // The cachelet's own victim choice (Cachelet.Eviction.cs calls the same two rules).
            if (EvictionRules.PickVictims(
                    EvictionRules.VictimOrder(_eviction, _lru, static e => e.LastTouch, e => EvictionRules.IsExpired(e.ExpiresAt, now), static _ => true),
                    excess,
                    static e => e.Size) is not { } victims)
            {
                return false;
            }

            foreach (SimEntry victim in victims)
            {
                Remove(victim.Key);
                _evictedSinceSample[victim.Key] = _evictedSinceSample.GetValueOrDefault(victim.Key) + 1;
            }

            Evictions += victims.Count;
        }

        var entry = new SimEntry(key, size, version, owned, EvictionRules.IsLarge(_eviction, size))
        {
            ExpiresAt = EvictionRules.ExpiresAt(_eviction, now),
            LastTouch = ++_touchClock,
        };
        entry.Node = ListOf(entry).AddLast(entry);
        _index[key] = entry;
        BytesCached += size;
        return true;
    }

    public void Remove(int key)
    {
        if (_index.Remove(key, out SimEntry? entry))
        {
            ListOf(entry).Remove(entry.Node!);
            BytesCached -= entry.Size;
        }
    }

    /// <summary>Counts an access to this cachelet, by its own functions or a peer (the cache-size voter's traffic).</summary>
    public void Accessed() => _accessesSinceSample++;

    /// <summary>
    /// The cache-size voter's numbers since the previous sample (<c>CacheSizeScaleMonitor</c> reads them from the
    /// cachelet's per-object statistics): the most evictions of one object, and the accesses; then starts the next interval.
    /// </summary>
    public (long MaxEvictionsOfOneObject, long Accesses) TakeSample()
    {
        long max = _evictedSinceSample.Count == 0 ? 0 : _evictedSinceSample.Values.Max();
        long accesses = _accessesSinceSample;
        _evictedSinceSample.Clear();
        _accessesSinceSample = 0;
        return (max, accesses);
    }

    /// <summary>
    /// The ring changed: each entry is owned or not as <paramref name="owner"/> says, moved to its ownership's list in
    /// last-touch order (as <c>Cachelet.OnRingChanged</c> does).
    /// </summary>
    public void Reown(int self, int[] owner)
    {
        if (!_index.Values.Any(e => e.Owned != (owner[e.Key] == self)))
        {
            return;
        }

        SimEntry[] all = [.. _index.Values.OrderBy(e => e.LastTouch)];
        foreach (LinkedList<SimEntry> list in _lru.SelectMany(l => l))
        {
            list.Clear();
        }

        foreach (SimEntry entry in all)
        {
            entry.Owned = owner[entry.Key] == self;
            entry.Node = ListOf(entry).AddLast(entry);
        }
    }

    public KeyStats Stats(int key)
    {
        if (!_stats.TryGetValue(key, out KeyStats? stats))
        {
            stats = new KeyStats();
            _stats[key] = stats;
        }

        return stats;
    }

    /// <summary>The unload snapshot (§3.3): every key accessed since load, with its cached size and version if cached.</summary>
    public UnloadSnapshot Snapshot(string appName, string instanceId, DateTimeOffset takenAt, IReadOnlyList<string> keyNames)
    {
        var entries = new List<SnapshotEntry>(_stats.Count);
        foreach ((int key, KeyStats s) in _stats)
        {
            _index.TryGetValue(key, out SimEntry? cached);
            entries.Add(new SnapshotEntry
            {
                Key = keyNames[key],
                SizeBytes = cached?.Size ?? 0,
                Version = cached is null ? null : VersionName(cached.Version),
                OwnHits = s.OwnHits,
                OwnMisses = s.OwnMisses,
                OwnWrites = s.OwnWrites,
                PeerHits = s.PeerHits,
                PeerMisses = s.PeerMisses,
                PeerWrites = s.PeerWrites,
                MeanInterArrival = s.Accesses > 1 ? TimeSpan.FromMilliseconds((double)(s.LastMs - s.FirstMs) / (s.Accesses - 1)) : TimeSpan.Zero,
                LastAccess = DateTimeOffset.FromUnixTimeMilliseconds(s.LastMs),
            });
        }

        return new UnloadSnapshot { AppName = appName, InstanceId = instanceId, TakenAt = takenAt, Entries = entries };
    }

    /// <summary>Unload: the cache and its statistics go with the instance.</summary>
    public void Clear()
    {
        _index.Clear();
        _stats.Clear();
        foreach (LinkedList<SimEntry> list in _lru.SelectMany(l => l))
        {
            list.Clear();
        }

        BytesCached = 0;
    }

    internal static string VersionName(int version) => "v" + version.ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Expired entries first, then the policy's order (as the cachelet's <c>VictimOrderLocked</c>).</summary>
    private LinkedList<SimEntry> ListOf(SimEntry e) => _lru[e.Owned ? 1 : 0][e.Large ? 1 : 0];
}
