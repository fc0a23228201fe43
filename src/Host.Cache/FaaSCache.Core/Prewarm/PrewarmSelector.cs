namespace FaaSCache.Prewarm;

/// <summary>
/// The Load Daemon's choice of objects (§3.3): merges the unload snapshots of a look-back window and keeps the objects
/// with temporal locality (hit rate over a threshold) or that were accessed more than once across the merged snapshots.
/// Pure: no I/O, no clock.
/// </summary>
public static class PrewarmSelector
{
    /// <summary>How many invocations the look-back window aims to cover.</summary>
    public const double LookBackInvocations = 10;

    /// <summary>The shortest look-back window: one hour.</summary>
    public static readonly TimeSpan MinLookBack = TimeSpan.FromHours(1);

    /// <summary>The longest look-back window: seven days.</summary>
    public static readonly TimeSpan MaxLookBack = TimeSpan.FromDays(7);

    /// <summary>The fixed part of a miss's cost: one storage round trip, in seconds.</summary>
    public const double MissLatencySeconds = 0.02;

    /// <summary>The storage bandwidth a miss's transfer is costed at, in bytes per second (100 MB/s).</summary>
    public const double MissBandwidthBytesPerSecond = 100_000_000;

    /// <summary>
    /// The look-back window for an app invoked <paramref name="invocationsPerHour"/> times an hour (§3.3: the period is
    /// based on the invocation frequency): the time <see cref="LookBackInvocations"/> invocations take, so a
    /// rarely-invoked app looks back over enough unload/load periods to see an object reused across them, and a busy
    /// one only over recent history. Bounded to [<see cref="MinLookBack"/>, <see cref="MaxLookBack"/>]; an unknown
    /// frequency (zero, negative, NaN) gets <see cref="MaxLookBack"/>.
    /// </summary>
    /// <param name="invocationsPerHour">The app's invocation frequency.</param>
    /// <returns>The window, between one hour and seven days.</returns>
    public static TimeSpan LookBackWindow(double invocationsPerHour)
    {
        if (double.IsNaN(invocationsPerHour) || invocationsPerHour <= 0)
        {
            return MaxLookBack;
        }

        double hours = LookBackInvocations / invocationsPerHour;
        if (hours >= MaxLookBack.TotalHours)
        {
            return MaxLookBack;
        }

        return hours <= MinLookBack.TotalHours ? MinLookBack : TimeSpan.FromHours(hours);
    }

    /// <summary>The cost in seconds of missing an object of <paramref name="sizeBytes"/>: a round trip plus its transfer.</summary>
    /// <param name="sizeBytes">The object size.</param>
    /// <returns>The miss cost in seconds.</returns>
    public static double MissCostSeconds(long sizeBytes) => MissLatencySeconds + (Math.Max(0, sizeBytes) / MissBandwidthBytesPerSecond);

    /// <summary>
    /// Merges the snapshots taken within [<paramref name="now"/> - <paramref name="lookBack"/>, <paramref name="now"/>]
    /// per key (counts summed; size and version from the latest snapshot that had the object cached, else the latest)
    /// and keeps the keys whose hit rate (hits over reads, own and peer together) is above
    /// <paramref name="hitRateThreshold"/> or that were accessed more than once. A key's accesses are the larger of its
    /// own-function accesses and its peer-served accesses, summed over the snapshots: a read through a remote owner is
    /// counted once at the reader (own) and once at the owner (peer), and taking the larger avoids counting it twice
    /// while still seeing accesses whose reader's snapshot is missing. Ordered by
    /// <see cref="PrewarmCandidate.ExpectedBenefit"/> (accesses times <see cref="MissCostSeconds"/>) descending, ties by key.
    /// </summary>
    /// <param name="snapshots">The snapshots available (any time; those outside the window are ignored).</param>
    /// <param name="now">The load time.</param>
    /// <param name="lookBack">The look-back window, e.g. from <see cref="LookBackWindow"/>.</param>
    /// <param name="hitRateThreshold">The hit rate (0..1) above which an object is loaded.</param>
    /// <returns>The objects to load, most beneficial first.</returns>
    public static IReadOnlyList<PrewarmCandidate> Select(IEnumerable<UnloadSnapshot> snapshots, DateTimeOffset now, TimeSpan lookBack, double hitRateThreshold)
    {
        ArgumentNullException.ThrowIfNull(snapshots);
        ArgumentOutOfRangeException.ThrowIfLessThan(lookBack, TimeSpan.Zero);
        if (double.IsNaN(hitRateThreshold))
        {
            throw new ArgumentOutOfRangeException(nameof(hitRateThreshold), hitRateThreshold, "The hit-rate threshold must be a number between 0 and 1.");
        }

        DateTimeOffset from = now - lookBack;
        var merged = new Dictionary<string, Merged>(StringComparer.Ordinal);
        foreach (UnloadSnapshot snapshot in snapshots.Where(s => s.TakenAt >= from && s.TakenAt <= now).OrderBy(s => s.TakenAt))
        {
            foreach (SnapshotEntry entry in snapshot.Entries)
            {
                if (!merged.TryGetValue(entry.Key, out Merged? m))
                {
                    m = new Merged();
                    merged[entry.Key] = m;
                }

                m.Add(entry);
            }
        }

        return merged
            .Select(kv => kv.Value.ToCandidate(kv.Key))
            .Where(c => c.HitRate > hitRateThreshold || c.Accesses > 1)
            .OrderByDescending(c => c.ExpectedBenefit)
            .ThenBy(c => c.Key, StringComparer.Ordinal)
            .ToList();
    }

    /// <summary>One key's counts summed over the snapshots, fed in time order.</summary>
    private sealed class Merged
    {
        private long _hits;
        private long _reads;
        private long _own;
        private long _peer;
        private long _size;
        private string? _version;
        private bool _sawCached;

        public void Add(SnapshotEntry e)
        {
            _hits += e.OwnHits + e.PeerHits;
            _reads += e.OwnHits + e.OwnMisses + e.PeerHits + e.PeerMisses;
            _own += e.OwnHits + e.OwnMisses + e.OwnWrites;
            _peer += e.PeerHits + e.PeerMisses + e.PeerWrites;
            bool cached = e.SizeBytes > 0 || e.Version is not null;
            if (cached || !_sawCached)
            {
                // Later snapshots come later: keep the newest cached size and version.
                _size = e.SizeBytes;
                _version = e.Version;
                _sawCached |= cached;
            }
        }

        public PrewarmCandidate ToCandidate(string key)
        {
            long accesses = Math.Max(_own, _peer);
            double hitRate = _reads == 0 ? 0 : (double)_hits / _reads;
            return new PrewarmCandidate(key, _size, _version, hitRate, accesses, accesses * MissCostSeconds(_size));
        }
    }
}
