namespace FaaSCache.Prewarm;

/// <summary>Pure helpers around unload snapshots: building one from a cachelet's statistics, and what they say of the app.</summary>
public static class UnloadSnapshots
{
    /// <summary>The snapshot of <paramref name="statistics"/> (every object the cachelet tracked) at <paramref name="takenAt"/>.</summary>
    /// <param name="appName">The app.</param>
    /// <param name="instanceId">The instance unloading.</param>
    /// <param name="takenAt">The unload time.</param>
    /// <param name="statistics">The cachelet's per-object statistics.</param>
    /// <returns>The snapshot, its entries in key order.</returns>
    public static UnloadSnapshot FromStatistics(string appName, string instanceId, DateTimeOffset takenAt, IEnumerable<ObjectStatistics> statistics)
    {
        ArgumentNullException.ThrowIfNull(statistics);
        return new UnloadSnapshot
        {
            AppName = appName,
            InstanceId = instanceId,
            TakenAt = takenAt,
            Entries = [.. statistics
                .Where(s => s.Accesses + s.PeerAccesses > 0 || s.Cached)
                .OrderBy(s => s.Key, StringComparer.Ordinal)
                .Select(s => new SnapshotEntry
                {
                    Key = s.Key,
                    SizeBytes = s.SizeBytes,
                    Version = s.Version,
                    OwnHits = s.LocalHits + s.RemoteHits,
                    OwnMisses = s.LocalMisses + s.RemoteMisses + s.StorageFallbacks,
                    OwnWrites = s.Writes,
                    PeerHits = s.PeerHits,
                    PeerMisses = s.PeerMisses,
                    PeerWrites = s.PeerWrites,
                    MeanInterArrival = s.MeanInterArrival,
                    LastAccess = s.LastAccess,
                })],
        };
    }

    /// <summary>
    /// The app's invocation frequency as far as the snapshots show it, for <see cref="PrewarmSelector.LookBackWindow"/>
    /// at load, before any invocation of this lifetime: every invocation of a function that reads cached data reads its
    /// inputs, so the most-accessed key's accesses (the larger of own and peer-served, as in the selection) divided by
    /// the time the snapshots cover estimate the invocations per hour. The covered time runs from the earliest access
    /// any entry implies (its last access less its mean inter-arrival time per earlier access, or the snapshot time)
    /// to the latest snapshot, and is at least one minute. A lower bound for apps whose functions read nothing; 0 with
    /// no snapshots (unknown: the longest window).
    /// </summary>
    /// <param name="snapshots">The snapshots.</param>
    /// <returns>Estimated invocations per hour.</returns>
    public static double EstimateInvocationsPerHour(IReadOnlyCollection<UnloadSnapshot> snapshots)
    {
        ArgumentNullException.ThrowIfNull(snapshots);
        if (snapshots.Count == 0)
        {
            return 0;
        }

        DateTimeOffset end = snapshots.Max(s => s.TakenAt);
        DateTimeOffset start = end;
        var own = new Dictionary<string, long>(StringComparer.Ordinal);
        var peer = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (UnloadSnapshot snapshot in snapshots)
        {
            start = Min(start, snapshot.TakenAt);
            foreach (SnapshotEntry e in snapshot.Entries)
            {
                long ownAccesses = e.OwnHits + e.OwnMisses + e.OwnWrites;
                long peerAccesses = e.PeerHits + e.PeerMisses + e.PeerWrites;
                own[e.Key] = own.GetValueOrDefault(e.Key) + ownAccesses;
                peer[e.Key] = peer.GetValueOrDefault(e.Key) + peerAccesses;
                long accesses = Math.Max(ownAccesses, peerAccesses);
                if (e.LastAccess != default && accesses > 0)
                {
                    start = Min(start, e.LastAccess - (e.MeanInterArrival * (accesses - 1)));
                }
            }
        }

        long most = own.Keys.Select(k => Math.Max(own[k], peer[k])).DefaultIfEmpty(0).Max();
        TimeSpan span = end - start;
        if (span < TimeSpan.FromMinutes(1))
        {
            span = TimeSpan.FromMinutes(1);
        }

        return most / span.TotalHours;
    }

    private static DateTimeOffset Min(DateTimeOffset a, DateTimeOffset b) => a < b ? a : b;
}
