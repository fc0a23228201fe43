namespace FaaSCache.Caching;

/// <summary>What an access was, for the per-object statistics: own functions' accesses apart from peers'.</summary>
internal enum AccessKind
{
    LocalHit,
    LocalMiss,
    RemoteHit,
    RemoteMiss,
    StorageFallback,
    Write,
    PeerHit,
    PeerMiss,
    PeerWrite,
}

/// <summary>
/// Per-object statistics (§3.3's snapshot and the cache-size voter read them): each key's accesses by kind, evictions
/// and inter-arrival time, kept for evicted objects too and bounded. No lock of its own: the cachelet's lock guards it,
/// as an access is counted together with the entry it touched.
/// </summary>
internal sealed class AccessStatistics
{
    private const int MaxTrackedObjects = 100_000;
    private readonly Dictionary<string, StatsState> _stats = new(StringComparer.Ordinal);

    /// <summary>Gets the tracked keys and their counts.</summary>
    public IEnumerable<KeyValuePair<string, StatsState>> All => _stats;

    /// <summary>The counts of <paramref name="key"/>, or null when it was never accessed.</summary>
    public StatsState? Find(string key) => _stats.TryGetValue(key, out StatsState? s) ? s : null;

    /// <summary>The counts of <paramref name="key"/>, made if needed (the least recent uncached tenth goes when the table is full).</summary>
    public StatsState Of(string key, Func<string, bool> isCached)
    {
        if (!_stats.TryGetValue(key, out StatsState? s))
        {
            if (_stats.Count >= MaxTrackedObjects)
            {
                Trim(isCached);
            }

            s = new StatsState();
            _stats[key] = s;
        }

        return s;
    }

    /// <summary>The access a read of <paramref name="source"/> was, for this instance's functions or, with <paramref name="forPeer"/>, for another cachelet.</summary>
    public static AccessKind? AccessOf(ReadSource source, bool forPeer) => (source, forPeer) switch
    {
        (ReadSource.LocalHit, true) => AccessKind.PeerHit,
        (ReadSource.LocalMiss, true) => AccessKind.PeerMiss,
        (ReadSource.LocalHit, false) => AccessKind.LocalHit,
        (ReadSource.LocalMiss, false) => AccessKind.LocalMiss,
        (ReadSource.RemoteHit, _) => AccessKind.RemoteHit,
        (ReadSource.RemoteMiss, _) => AccessKind.RemoteMiss,
        (ReadSource.StorageFallback, _) => AccessKind.StorageFallback,
        _ => null,
    };

    /// <summary>Counts an access of <paramref name="kind"/> to <paramref name="key"/> at <paramref name="now"/>.</summary>
    public void Record(string key, AccessKind? kind, DateTimeOffset now, Func<string, bool> isCached)
    {
        if (kind is not { } access)
        {
            return;
        }

        StatsState s = Of(key, isCached);
        if (s.LastAccess != default)
        {
            // Running mean of the gaps between accesses.
            s.Gaps++;
            s.MeanGapTicks += ((now - s.LastAccess).Ticks - s.MeanGapTicks) / s.Gaps;
        }

        s.LastAccess = now;
        if (s.AwaitingReadAfterMemoryEviction && access != AccessKind.Write && access != AccessKind.PeerWrite)
        {
            // A read of a key the Memory Daemon evicted: counted once per eviction.
            s.AwaitingReadAfterMemoryEviction = false;
            s.ReadsAfterMemoryEviction++;
        }

        switch (access)
        {
            case AccessKind.LocalHit: s.LocalHits++; break;
            case AccessKind.LocalMiss: s.LocalMisses++; break;
            case AccessKind.RemoteHit: s.RemoteHits++; break;
            case AccessKind.RemoteMiss: s.RemoteMisses++; break;
            case AccessKind.StorageFallback: s.StorageFallbacks++; break;
            case AccessKind.Write: s.Writes++; break;
            case AccessKind.PeerHit: s.PeerHits++; break;
            case AccessKind.PeerMiss: s.PeerMisses++; break;
            case AccessKind.PeerWrite: s.PeerWrites++; break;
        }
    }

    /// <summary>The public view of <paramref name="s"/>, with what the cache holds of <paramref name="key"/> now.</summary>
    public static ObjectStatistics Snapshot(string key, StatsState s, CacheEntry? entry, bool owned) => new()
    {
        Key = key,
        LocalHits = s.LocalHits,
        LocalMisses = s.LocalMisses,
        RemoteHits = s.RemoteHits,
        RemoteMisses = s.RemoteMisses,
        StorageFallbacks = s.StorageFallbacks,
        Writes = s.Writes,
        PeerHits = s.PeerHits,
        PeerMisses = s.PeerMisses,
        PeerWrites = s.PeerWrites,
        Evictions = s.Evictions,
        MemoryEvictions = s.MemoryEvictions,
        ReadsAfterMemoryEviction = s.ReadsAfterMemoryEviction,
        MeanInterArrival = s.Gaps == 0 ? TimeSpan.Zero : TimeSpan.FromTicks((long)s.MeanGapTicks),
        LastAccess = s.LastAccess,
        Owned = entry?.Owned ?? owned,
        Cached = entry is not null,
        SizeBytes = entry?.Size ?? 0,
        Version = entry?.Version,
    };

    private void Trim(Func<string, bool> isCached)
    {
        // Forget the least recently accessed tenth of the objects that are not cached.
        foreach (string key in _stats.Where(kv => !isCached(kv.Key)).OrderBy(kv => kv.Value.LastAccess)
                     .Take(MaxTrackedObjects / 10).Select(kv => kv.Key).ToList())
        {
            _stats.Remove(key);
        }
    }

    internal sealed class StatsState
    {
        public long LocalHits { get; set; }

        public long LocalMisses { get; set; }

        public long RemoteHits { get; set; }

        public long RemoteMisses { get; set; }

        public long StorageFallbacks { get; set; }

        public long Writes { get; set; }

        public long PeerHits { get; set; }

        public long PeerMisses { get; set; }

        public long PeerWrites { get; set; }

        public long Evictions { get; set; }

        public long MemoryEvictions { get; set; }

        public long ReadsAfterMemoryEviction { get; set; }

        public bool AwaitingReadAfterMemoryEviction { get; set; }

        public long Gaps { get; set; }

        public double MeanGapTicks { get; set; }

        public DateTimeOffset LastAccess { get; set; }
    }
}
