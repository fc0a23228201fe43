namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Replays one app under one policy set, over the trace's own (simulated) time: reads are local hits, local misses,
/// remote hits or remote misses (§3.2, Fig. 6) on the app's cachelets; writes go through the owner; an idle app is
/// unloaded as its keep-alive rule says (<see cref="PolicySet.EffectiveKeepAlive"/>; each cachelet snapshots, then goes)
/// and loaded again on one instance, pre-warmed by <see cref="PrewarmSelector"/> if the policy set says so (§3.3). The instances come and go as the voters
/// say (<see cref="AppScaler"/>) unless the layout fixes their number; an invocation lasts as long as its accesses take
/// one after another under the first latency model (the trace records no other execution time).
/// </summary>
/// <remarks>
/// When the app is unloaded and loaded again is <see cref="SimKeepAlive"/>'s (a fixed period, or the scale controller's
/// hybrid-histogram rules). Pre-warm runs when the app is loaded: ahead of the next invocation when the histogram loaded
/// it at its pre-warm time (done by the time the invocation arrives, costing it nothing), otherwise after the invocation
/// that loaded it (the Load Daemon yields to invocations). Each cachelet loads only the candidates it owns, most
/// beneficial first, while they fit without evicting.
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
        var scaler = new AppScaler(layout, policy, options);
        var snapshots = new List<UnloadSnapshot>();
        long[] sizeNow = new long[trace.Keys.Count];
        int[] versionNow = new int[trace.Keys.Count];
        var keepAlive = new SimKeepAlive(policy, options);
        bool[] started = new bool[trace.Invocations];
        long lastMs = long.MinValue, firstMs = trace.Count > 0 ? trace.TimeMs[0] : 0;
        bool loaded = false;
        int prewarmAfter = -1;
        long reads = 0, writes = 0, lh = 0, lm = 0, rh = 0, rm = 0, uncacheable = 0, prewarmed = 0, unloads = 0;
        double[] baseline = new double[models], cached = new double[models];
        // Statistics feed only the unload snapshots: without pre-warm they are counted into a throwaway.
        var scratch = new KeyStats();

        for (int i = 0; i < trace.Count; i++)
        {
            long t = trace.TimeMs[i];
            bool newInvocation = !started[trace.Invocation[i]];
            started[trace.Invocation[i]] = true;
            long? reloadedMs = null;
            if (loaded && keepAlive.Idle(lastMs, t, newInvocation) is { } idle)
            {
                long unloadMs = idle.UnloadMs;
                reloadedMs = idle.ReloadedMs;
                scaler.AdvanceTo(unloadMs * 1000);
                if (policy.Prewarm)
                {
                    var takenAt = DateTimeOffset.FromUnixTimeMilliseconds(unloadMs);
                    for (int c = 0; c < scaler.Ready; c++)
                    {
                        snapshots.Add(scaler.Instance(c).Snapshot(trace.AppName, layout.InstanceIds[c], takenAt, trace.Keys));
                    }
                }

                scaler.Unload(unloadMs * 1000);
                loaded = false;
                unloads++;
            }

            var now = DateTimeOffset.FromUnixTimeMilliseconds(t);
            if (!loaded)
            {
                // Loaded ahead of this invocation (the hybrid histogram's pre-warm time), the Load Daemon done by now; or by
                // this invocation, the Load Daemon running after it (it yields to invocations): its own reads miss.
                long loadMs = reloadedMs ?? t;
                scaler.Load(loadMs * 1000);
                scaler.AdvanceTo(t * 1000);
                if (policy.Prewarm && snapshots.Count > 0)
                {
                    if (reloadedMs is not null)
                    {
                        prewarmed += Prewarm(trace, scaler, policy, snapshots, DateTimeOffset.FromUnixTimeMilliseconds(loadMs), InvocationsPerHour(trace, i, firstMs, loadMs), sizeNow, versionNow);
                    }
                    else
                    {
                        prewarmAfter = trace.Invocation[i];
                    }
                }

                loaded = true;
            }
            else
            {
                scaler.AdvanceTo(t * 1000);
            }

            lastMs = t;
            int key = trace.Key[i], version = trace.Version[i], invocation = trace.Invocation[i];
            long size = trace.Size[i];
            sizeNow[key] = size;
            versionNow[key] = version;
            int self = scaler.InstanceOf(invocation, t * 1000), owner = scaler.Owners[key];
            SimInstance mine = scaler.Instance(self), owners = scaler.Instance(owner);
            KeyStats stats = policy.Prewarm ? mine.Stats(key) : scratch;
            stats.Accessed(t);
            mine.Accessed();
            for (int m = 0; m < models; m++)
            {
                baseline[m] += latencies[m].Storage.Micros(size);
            }

            double took;
            if (trace.Write[i])
            {
                // Sync persistence: the write costs a storage write with or without the cache; the owner keeps the new version.
                writes++;
                took = Add(cached, latencies, static l => l.Storage, size);
                stats.OwnWrites++;
                if (owner != self)
                {
                    KeyStats ownerWrites = policy.Prewarm ? owners.Stats(key) : scratch;
                    ownerWrites.PeerWrites++;
                    ownerWrites.Accessed(t);
                    owners.Accessed();
                    mine.Remove(key);
                }

                owners.Insert(key, size, version, owned: true, now);
            }
            else
            {
                reads++;
                if (!mine.Admits(size))
                {
                    uncacheable++;
                    took = Add(cached, latencies, static l => l.Storage, size);
                    stats.OwnMisses++;
                    scaler.StorageRead(self, trace.Keys[key], size);
                }
                else if (mine.TryHit(key, version, now))
                {
                    lh++;
                    took = Add(cached, latencies, static l => l.LocalHit, size);
                    stats.OwnHits++;
                }
                else if (owner == self)
                {
                    lm++;
                    took = Add(cached, latencies, static l => l.LocalMiss, size);
                    stats.OwnMisses++;
                    mine.Insert(key, size, version, owned: true, now);
                    scaler.StorageRead(self, trace.Keys[key], size);
                }
                else
                {
                    KeyStats ownerStats = policy.Prewarm ? owners.Stats(key) : scratch;
                    ownerStats.Accessed(t);
                    owners.Accessed();
                    if (owners.TryHit(key, version, now))
                    {
                        rh++;
                        took = Add(cached, latencies, static l => l.RemoteHit, size);
                        ownerStats.PeerHits++;
                        stats.OwnHits++;
                    }
                    else
                    {
                        rm++;
                        took = Add(cached, latencies, static l => l.RemoteMiss, size);
                        ownerStats.PeerMisses++;
                        stats.OwnMisses++;
                        owners.Insert(key, size, version, owned: true, now);
                        scaler.StorageRead(owner, trace.Keys[key], size);
                    }

                    // Non-owners keep a copy too: a popular object costs at most one remote hit per instance.
                    mine.Insert(key, size, version, owned: false, now);
                }
            }

            scaler.Accessed(invocation, t * 1000, took, trace.LastAccess[invocation] == i);
            if (prewarmAfter == invocation && trace.LastAccess[invocation] == i)
            {
                prewarmed += Prewarm(trace, scaler, policy, snapshots, now, InvocationsPerHour(trace, i, firstMs, t), sizeNow, versionNow);
                prewarmAfter = -1;
            }
        }

        if (loaded)
        {
            scaler.Unload(lastMs * 1000);
        }

        return new AppResult
        {
            AppName = trace.AppName,
            Instances = scaler.Peak,
            MeanInstances = scaler.LoadedSeconds > 0 ? scaler.InstanceSeconds / scaler.LoadedSeconds : scaler.Peak,
            ScaleOuts = scaler.ScaleOuts,
            ScaleIns = scaler.ScaleIns,
            Reads = reads,
            Writes = writes,
            LocalHits = lh,
            LocalMisses = lm,
            RemoteHits = rh,
            RemoteMisses = rm,
            Uncacheable = uncacheable,
            Prewarmed = prewarmed,
            Unloads = unloads,
            Evictions = scaler.Evictions,
            BaselineMicrosByModel = baseline,
            CachedMicrosByModel = cached,
        };
    }

    /// <summary>The app's invocation rate so far (the Load Daemon's look-back window follows it).</summary>
    private static double InvocationsPerHour(AppTrace trace, int access, long firstMs, long nowMs)
        => (trace.Invocation[access] + 1) / Math.Max((nowMs - firstMs) / 3_600_000.0, 1 / 60.0);

    /// <summary>Adds one access's cost under every model; returns the first model's (the one the voters see).</summary>
    private static double Add(double[] totals, IReadOnlyList<LatencyModel> latencies, Func<LatencyModel, LatencyCurve> curve, long size)
    {
        double first = 0;
        for (int m = 0; m < totals.Length; m++)
        {
            double micros = curve(latencies[m]).Micros(size);
            totals[m] += micros;
            first = m == 0 ? micros : first;
        }

        return first;
    }

    private static long Prewarm(
        AppTrace trace, AppScaler scaler, PolicySet policy, List<UnloadSnapshot> snapshots,
        DateTimeOffset now, double invocationsPerHour, long[] sizeNow, int[] versionNow)
    {
        // Snapshots older than the longest look-back can never be selected again.
        snapshots.RemoveAll(s => s.TakenAt < now - PrewarmSelector.MaxLookBack);
        TimeSpan lookBack = PrewarmSelector.LookBackWindow(invocationsPerHour);
        int[] owners = scaler.Owners;
        long loaded = 0;
        foreach (PrewarmCandidate candidate in PrewarmSelector.Select(snapshots, now, lookBack, policy.HitRateThreshold))
        {
            if (!trace.KeyIds.TryGetValue(candidate.Key, out int key))
            {
                continue;
            }

            // The Load Daemon reads the current version from storage; each cachelet loads only what it owns.
            if (scaler.Instance(owners[key]).Insert(key, sizeNow[key], versionNow[key], owned: true, now, evict: false))
            {
                loaded++;
            }
        }

        return loaded;
    }
}
