using FaaSCache.Ownership;

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
        _entries.TryGetValue(key, out CacheEntry? entry);
        return new ObjectStatistics
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
            Owned = entry?.Owned ?? _owners.IsLocalOwner(key),
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

    /// <summary>The access a read of <paramref name="source"/> was, for this instance's functions or, with <paramref name="forPeer"/>, for another cachelet.</summary>
    private static AccessKind? AccessOf(ReadSource source, bool forPeer) => (source, forPeer) switch
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

    private void RecordAccessLocked(string key, AccessKind? kind)
    {
        if (kind is not { } access)
        {
            return;
        }

        StatsState s = StatsLocked(key);
        DateTimeOffset now = _time.GetUtcNow();
        if (s.LastAccess != default)
        {
            // Running mean of the gaps between accesses.
            s.Gaps++;
            s.MeanGapTicks += ((now - s.LastAccess).Ticks - s.MeanGapTicks) / s.Gaps;
        }

        s.LastAccess = now;
        NoteReadAfterMemoryEvictionLocked(s, access);
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

    private void TrimStatsLocked()
    {
        // Forget the least recently accessed tenth of the objects that are not cached.
        foreach (string key in _stats.Where(kv => !_entries.ContainsKey(kv.Key)).OrderBy(kv => kv.Value.LastAccess)
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
