using FaaSCache.Caching.Index;
using FaaSCache.Scaling;
using FaaSCache.Scaling.Voters;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// One simulated instance: its cache (the cachelet's own <see cref="CacheIndex{TKey, TEntry}"/>: same lists, same
/// eviction rules; objects are sizes and versions, nothing is pinned as an access completes before the next starts),
/// each key's access counts for the unload snapshot, and what its voters read (invocations, evictions, scaled loads).
/// </summary>
internal sealed class SimInstance
{
    private readonly CacheIndex<int, SimEntry> _index;
    private readonly Dictionary<int, KeyStats> _stats = [];

    // The cache-size voter's inputs since its last query: evictions by key and accesses (own and peers').
    private readonly Dictionary<int, int> _evictedSinceSample = [];
    private long _accessesSinceSample;

    public SimInstance(PolicySet policy, SimClock clock, TransferProfiler profiler, int maxInstances)
    {
        _index = new CacheIndex<int, SimEntry>(policy.Eviction, policy.CapacityBytes);
        Meter = new InvocationMeter(clock);
        Bandwidth = new BandwidthScaler(profiler, controller: null, maxInstances, clock);
        LastSample = clock.Micros;
        LastScaledLoad = long.MinValue;
    }

    public InvocationMeter Meter { get; }

    public BandwidthScaler Bandwidth { get; }

    /// <summary>Gets or sets when the cache-size voter was last asked (microseconds).</summary>
    public long LastSample { get; set; }

    /// <summary>Gets or sets when this instance last recorded a scaled load (microseconds; the bandwidth voter looks back <see cref="BandwidthScaleMonitor.HoldWindow"/>).</summary>
    public long LastScaledLoad { get; set; }

    /// <summary>Gets the objects evicted to make room.</summary>
    public long Evictions => _index.Evictions;

    public bool Admits(long size) => _index.Admits(size);

    public bool Contains(int key) => _index.ContainsKey(key);

    /// <summary>The entry of <paramref name="key"/> at <paramref name="version"/>, touched; a stale or expired copy is dropped.</summary>
    public bool TryHit(int key, int version, DateTimeOffset now)
    {
        if (!_index.TryGetValue(key, out SimEntry? entry))
        {
            return false;
        }

        if (entry.Version != version || entry.IsExpiredAt(now))
        {
            _index.Detach(entry);
            return false;
        }

        _index.Touch(entry);
        return true;
    }

    /// <summary>Caches <paramref name="key"/>, evicting by policy (unless <paramref name="evict"/> is false); false when it cannot fit.</summary>
    public bool Insert(int key, long size, int version, bool owned, DateTimeOffset now, bool evict = true)
    {
        Remove(key);
        if (evict)
        {
            if (_index.TryReserve(size, now) is not { } victims)
            {
                return false;
            }

            foreach (SimEntry victim in victims)
            {
                _evictedSinceSample[victim.Key] = _evictedSinceSample.GetValueOrDefault(victim.Key) + 1;
            }
        }
        else if (!_index.Admits(size) || !_index.TryReserveFree(size))
        {
            return false;
        }

        _index.Insert(new SimEntry(key, size, version, owned, _index.IsLarge(size)), now);
        return true;
    }

    public void Remove(int key)
    {
        if (_index.TryGetValue(key, out SimEntry? entry))
        {
            _index.Detach(entry);
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

    /// <summary>The ring changed: each entry is owned or not as <paramref name="owner"/> says (as the cachelet's ring handler does).</summary>
    public void Reown(int self, int[] owner) => _index.Reown(e => owner[e.Key] == self);

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

    /// <summary>A profiler whose profile is <paramref name="links"/> (or nothing measured).</summary>
    public static TransferProfiler Profiler(TransferProfile? links, SimClock clock)
    {
        var profiler = new TransferProfiler(clock);
        if (links is null)
        {
            return profiler;
        }

        // One sample each: the profiler's running means start at the sample, so its profile is the given one.
        const long Bytes = 1L << 30;
        if (links.StorageBytesPerSecond is { } storage)
        {
            profiler.RecordStorage(Bytes, links.StorageLatency ?? TimeSpan.Zero, TimeSpan.FromSeconds(Bytes / storage));
        }

        if (links.PeerBytesPerSecond is { } peer)
        {
            profiler.RecordPeer(Bytes, links.PeerLatency ?? TimeSpan.Zero, TimeSpan.FromSeconds(Bytes / peer));
        }

        if (links.InstanceLoad is { } load)
        {
            profiler.RecordInstanceLoad(load);
        }

        return profiler;
    }

    internal static string VersionName(int version) => "v" + version.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
