using FaaSCache.Prewarm;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Replays one app under one policy set, over the trace's own (simulated) time: reads are local hits, local misses,
/// remote hits or remote misses (§3.2, Fig. 6) on the app's cachelets; writes go through the owner; an app idle for
/// <see cref="SimulationOptions.UnloadAfterIdle"/> is unloaded (each cachelet snapshots, then empties) and, when the
/// next invocation comes, reloaded, pre-warmed by <see cref="PrewarmSelector"/> if the policy set says so (§3.3).
/// </summary>
/// <remarks>
/// Pre-warm is assumed to finish before the reloading invocation arrives (the hybrid histogram scheduled the reload
/// ahead of it) and costs the invocation nothing; each cachelet loads only the candidates it owns, most beneficial
/// first, while they fit without evicting.
/// </remarks>
public static class AppSimulator
{
    /// <summary>Runs the replay.</summary>
    /// <param name="trace">The app's accesses.</param>
    /// <param name="layout">Its instances and key owners.</param>
    /// <param name="policy">The policy set.</param>
    /// <param name="latency">The latency model.</param>
    /// <param name="options">The simulation options.</param>
    /// <returns>The app's result.</returns>
    public static AppResult Run(AppTrace trace, AppLayout layout, PolicySet policy, LatencyModel latency, SimulationOptions options)
        => Run(trace, layout, policy, [latency], options);

    /// <summary>
    /// Runs the replay once and costs it under several latency models (hits and misses do not depend on latency), e.g.
    /// with and without the <c>strong</c> version check.
    /// </summary>
    /// <param name="trace">The app's accesses.</param>
    /// <param name="layout">Its instances and key owners.</param>
    /// <param name="policy">The policy set.</param>
    /// <param name="latencies">The latency models; the first is the result's <see cref="AppResult.CachedMicros"/>.</param>
    /// <param name="options">The simulation options.</param>
    /// <returns>The app's result.</returns>
    public static AppResult Run(AppTrace trace, AppLayout layout, PolicySet policy, IReadOnlyList<LatencyModel> latencies, SimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentNullException.ThrowIfNull(layout);
        ArgumentNullException.ThrowIfNull(policy);
        ArgumentNullException.ThrowIfNull(latencies);
        ArgumentNullException.ThrowIfNull(options);
        int models = latencies.Count;
        var cachelets = Enumerable.Range(0, layout.Instances).Select(_ => new SimCachelet(policy.Eviction, policy.CapacityBytes)).ToArray();
        var snapshots = new List<UnloadSnapshot>();
        long[] sizeNow = new long[trace.Keys.Count];
        int[] versionNow = new int[trace.Keys.Count];
        long idleMs = (long)options.UnloadAfterIdle.TotalMilliseconds;
        long lastMs = long.MinValue, firstMs = trace.Count > 0 ? trace.TimeMs[0] : 0;
        bool loaded = false;
        long reads = 0, writes = 0, lh = 0, lm = 0, rh = 0, rm = 0, uncacheable = 0, prewarmed = 0, unloads = 0;
        double[] baseline = new double[models], cached = new double[models];
        // Statistics feed only the unload snapshots: without pre-warm they are counted into a throwaway.
        var scratch = new KeyStats();

        for (int i = 0; i < trace.Count; i++)
        {
            long t = trace.TimeMs[i];
            if (loaded && t - lastMs > idleMs)
            {
                var takenAt = DateTimeOffset.FromUnixTimeMilliseconds(lastMs + idleMs);
                for (int c = 0; c < cachelets.Length; c++)
                {
                    if (policy.Prewarm)
                    {
                        snapshots.Add(cachelets[c].Snapshot(trace.AppName, layout.InstanceIds[c], takenAt, trace.Keys));
                    }

                    cachelets[c].Clear();
                }

                loaded = false;
                unloads++;
            }

            var now = DateTimeOffset.FromUnixTimeMilliseconds(t);
            if (!loaded)
            {
                if (policy.Prewarm && snapshots.Count > 0)
                {
                    double hours = Math.Max((t - firstMs) / 3_600_000.0, 1 / 60.0);
                    prewarmed += Prewarm(trace, layout, policy, cachelets, snapshots, now, (trace.Invocation[i] + 1) / hours, sizeNow, versionNow);
                }

                loaded = true;
            }

            lastMs = t;
            int key = trace.Key[i], version = trace.Version[i];
            long size = trace.Size[i];
            sizeNow[key] = size;
            versionNow[key] = version;
            int self = layout.InstanceOf(trace.Invocation[i]), owner = layout.Owner[key];
            SimCachelet mine = cachelets[self], owners = cachelets[owner];
            KeyStats stats = policy.Prewarm ? mine.Stats(key) : scratch;
            stats.Accessed(t);
            for (int m = 0; m < models; m++)
            {
                baseline[m] += latencies[m].Storage.Micros(size);
            }

            if (trace.Write[i])
            {
                // Sync persistence: the write costs a storage write with or without the cache; the owner keeps the new version.
                writes++;
                Add(cached, latencies, static l => l.Storage, size);
                stats.OwnWrites++;
                if (owner != self)
                {
                    KeyStats ownerWrites = policy.Prewarm ? owners.Stats(key) : scratch;
                    ownerWrites.PeerWrites++;
                    ownerWrites.Accessed(t);
                    mine.Remove(key);
                }

                owners.Insert(key, size, version, owned: true, now);
                continue;
            }

            reads++;
            if (!mine.Admits(size))
            {
                uncacheable++;
                Add(cached, latencies, static l => l.Storage, size);
                stats.OwnMisses++;
            }
            else if (mine.TryHit(key, version, now))
            {
                lh++;
                Add(cached, latencies, static l => l.LocalHit, size);
                stats.OwnHits++;
            }
            else if (owner == self)
            {
                lm++;
                Add(cached, latencies, static l => l.LocalMiss, size);
                stats.OwnMisses++;
                mine.Insert(key, size, version, owned: true, now);
            }
            else
            {
                KeyStats ownerStats = policy.Prewarm ? owners.Stats(key) : scratch;
                ownerStats.Accessed(t);
                if (owners.TryHit(key, version, now))
                {
                    rh++;
                    Add(cached, latencies, static l => l.RemoteHit, size);
                    ownerStats.PeerHits++;
                    stats.OwnHits++;
                }
                else
                {
                    rm++;
                    Add(cached, latencies, static l => l.RemoteMiss, size);
                    ownerStats.PeerMisses++;
                    stats.OwnMisses++;
                    owners.Insert(key, size, version, owned: true, now);
                }

                // Non-owners keep a copy too: a popular object costs at most one remote hit per instance.
                mine.Insert(key, size, version, owned: false, now);
            }
        }

        return new AppResult
        {
            AppName = trace.AppName,
            Instances = layout.Instances,
            Reads = reads,
            Writes = writes,
            LocalHits = lh,
            LocalMisses = lm,
            RemoteHits = rh,
            RemoteMisses = rm,
            Uncacheable = uncacheable,
            Prewarmed = prewarmed,
            Unloads = unloads,
            Evictions = cachelets.Sum(c => c.Evictions),
            BaselineMicrosByModel = baseline,
            CachedMicrosByModel = cached,
        };
    }

    private static void Add(double[] totals, IReadOnlyList<LatencyModel> latencies, Func<LatencyModel, LatencyCurve> curve, long size)
    {
        for (int m = 0; m < totals.Length; m++)
        {
            totals[m] += curve(latencies[m]).Micros(size);
        }
    }

    private static long Prewarm(
        AppTrace trace, AppLayout layout, PolicySet policy, SimCachelet[] cachelets, List<UnloadSnapshot> snapshots,
        DateTimeOffset now, double invocationsPerHour, long[] sizeNow, int[] versionNow)
    {
        // Snapshots older than the longest look-back can never be selected again.
        snapshots.RemoveAll(s => s.TakenAt < now - PrewarmSelector.MaxLookBack);
        TimeSpan lookBack = PrewarmSelector.LookBackWindow(invocationsPerHour);
        long loaded = 0;
        foreach (PrewarmCandidate candidate in PrewarmSelector.Select(snapshots, now, lookBack, policy.HitRateThreshold))
        {
            if (!trace.KeyIds.TryGetValue(candidate.Key, out int key))
            {
                continue;
            }

            // The Load Daemon reads the current version from storage; each cachelet loads only what it owns.
            if (cachelets[layout.Owner[key]].Insert(key, sizeNow[key], versionNow[key], owned: true, now, evict: false))
            {
                loaded++;
            }
        }

        return loaded;
    }
}
