namespace FaaSCache.Caching;

/// <summary>Per-object statistics (kept for evicted objects too, bounded).</summary>
public sealed partial class Cachelet
{
    private const int MaxTrackedObjects = 100_000;
    private readonly Dictionary<string, StatsState> _stats = new(StringComparer.Ordinal);

    /// <summary>Statistics of one key, or null when it was never accessed.</summary>
    public ObjectStatistics? GetStatistics(string key)
    {
        lock (_gate)
        {
            return _stats.TryGetValue(key, out StatsState? s) ? SnapshotLocked(key, s) : null;
        }
    }

    /// <summary>Statistics of every tracked key.</summary>
    public IReadOnlyList<ObjectStatistics> GetAllStatistics()
    {
        lock (_gate)
        {
            return _stats.Select(kv => SnapshotLocked(kv.Key, kv.Value)).ToList();
        }
    }

    private ObjectStatistics SnapshotLocked(string key, StatsState s)
    {
        _index.TryGetValue(key, out CacheEntry? entry);
        return new ObjectStatistics
        {
            Key = key,
            LocalHits = s.LocalHits,
            LocalMisses = s.LocalMisses,
            RemoteHits = s.RemoteHits,
            RemoteMisses = s.RemoteMisses,
            Writes = s.Writes,
            Evictions = s.Evictions,
            MeanInterArrival = s.Gaps == 0 ? TimeSpan.Zero : TimeSpan.FromTicks((long)s.MeanGapTicks),
            LastAccess = s.LastAccess,
            Owned = entry?.Owned ?? s.Owned,
            Cached = entry is not null,
            SizeBytes = entry?.Size ?? 0,
            Version = entry?.Version,
        };
    }

    private StatsState StatsLocked(string key)
    {
        if (!_stats.TryGetValue(key, out StatsState? s))
        {
            if (_stats.Count >= MaxTrackedObjects)
            {
                TrimStatsLocked();
            }

            s = new StatsState();
            _stats[key] = s;
        }

        return s;
    }

    private void RecordAccessLocked(string key, ReadSource? read, bool owned)
    {
        StatsState s = StatsLocked(key);
        DateTimeOffset now = _time.GetUtcNow();
        if (s.LastAccess != default)
        {
            // Running mean of the gaps between accesses.
            s.Gaps++;
            s.MeanGapTicks += ((now - s.LastAccess).Ticks - s.MeanGapTicks) / s.Gaps;
        }

        s.LastAccess = now;
        s.Owned = owned;
        switch (read)
        {
            case ReadSource.LocalHit: s.LocalHits++; break;
            case ReadSource.LocalMiss: s.LocalMisses++; break;
            case ReadSource.RemoteHit: s.RemoteHits++; break;
            case ReadSource.RemoteMiss: s.RemoteMisses++; break;
            case null: s.Writes++; break;
            default: break;
        }
    }

    private void TrimStatsLocked()
    {
        // Forget the least recently accessed tenth of the objects that are not cached.
        foreach (string key in _stats.Where(kv => !_index.ContainsKey(kv.Key)).OrderBy(kv => kv.Value.LastAccess)
                     .Take(MaxTrackedObjects / 10).Select(kv => kv.Key).ToList())
        {
            _stats.Remove(key);
        }
    }

    private sealed class StatsState
    {
        public long LocalHits { get; set; }

        public long LocalMisses { get; set; }

        public long RemoteHits { get; set; }

        public long RemoteMisses { get; set; }

        public long Writes { get; set; }

        public long Evictions { get; set; }

        public long Gaps { get; set; }

        public double MeanGapTicks { get; set; }

        public DateTimeOffset LastAccess { get; set; }

        public bool Owned { get; set; }
    }
}
