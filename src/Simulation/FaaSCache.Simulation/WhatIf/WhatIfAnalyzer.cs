namespace FaaSCache.Simulation.WhatIf;

/// <summary>
/// <c>faascache what-if</c>: replays one app's access log under a grid of host.json policy sets (consistency aside:
/// capacity, eviction policy, size threshold, TTL, pre-warm) and ranks them by expected mean access latency.
/// </summary>
public static class WhatIfAnalyzer
{
    private static readonly bool[] PrewarmOnOff = [true, false];

    /// <summary>Capacities tried: 32 MB, 128 MB, 512 MB, 1 GB.</summary>
    public static IReadOnlyList<long> Capacities { get; } = [32L << 20, 128L << 20, 512L << 20, 1L << 30];

    /// <summary>Size thresholds tried with the <c>size</c> policy: 4 KB, 12 KB (the default), 64 KB.</summary>
    public static IReadOnlyList<long> SizeThresholds { get; } = [4 * 1024, EvictionOptions.DEFAULT_SIZE_THRESHOLD_BYTES, 64 * 1024];

    /// <summary>TTLs tried: none, 10 minutes, 1 hour.</summary>
    public static IReadOnlyList<TimeSpan?> Ttls { get; } = [null, TimeSpan.FromMinutes(10), TimeSpan.FromHours(1)];

    /// <summary>The default grid: every capacity x (lru, size at each threshold) x TTL x pre-warm off/on.</summary>
    /// <returns>The policy sets.</returns>
    public static IReadOnlyList<PolicySet> DefaultGrid()
    {
        var evictions = new List<Func<TimeSpan?, EvictionOptions>> { ttl => new EvictionOptions { Policy = EvictionPolicy.Lru, Ttl = ttl } };
        evictions.AddRange(SizeThresholds.Select(t => (Func<TimeSpan?, EvictionOptions>)(ttl => new EvictionOptions { Policy = EvictionPolicy.Size, SizeThresholdBytes = t, Ttl = ttl })));
        return
        [
            .. from capacity in Capacities
            from eviction in evictions
            from ttl in Ttls
            from prewarm in PrewarmOnOff
            select new PolicySet { CapacityBytes = capacity, Eviction = eviction(ttl), Prewarm = prewarm },
        ];
    }

    /// <summary>Replays <paramref name="trace"/> under each policy set.</summary>
    /// <param name="trace">The app's log.</param>
    /// <param name="grid">The policy sets, e.g. <see cref="DefaultGrid"/>.</param>
    /// <param name="latency">The latency model.</param>
    /// <param name="options">The simulation options.</param>
    /// <returns>The outcomes, best first; the first is the winner.</returns>
    public static IReadOnlyList<WhatIfOutcome> Rank(AppTrace trace, IReadOnlyList<PolicySet> grid, LatencyModel latency, SimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentNullException.ThrowIfNull(grid);
        ArgumentNullException.ThrowIfNull(options);
        _ = new SimulationOptionsValidator().ThrowIfInvalid(options);
        AppLayout layout = AppLayout.For(trace, options);
        var outcomes = new WhatIfOutcome[grid.Count];
        Parallel.For(0, grid.Count, new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i => outcomes[i] = new WhatIfOutcome(grid[i], AppSimulator.Run(trace, layout, grid[i], latency, options)));
        double best = outcomes.Min(o => o.Result.CachedMicros);
        // Within 0.5% of the best counts as a tie: then the smallest cache, no TTL, lru and pre-warm on (the defaults) win.
        return
        [
            .. outcomes
                .OrderBy(o => o.Result.CachedMicros <= best * 1.005 ? 0 : 1)
                .ThenBy(o => o.Result.CachedMicros <= best * 1.005 ? 0 : o.Result.CachedMicros)
                .ThenBy(o => o.Policy.CapacityBytes)
                .ThenBy(o => o.Policy.Eviction.Ttl is null ? 0 : 1)
                .ThenBy(o => o.Policy.Eviction.Ttl ?? TimeSpan.Zero)
                .ThenBy(o => o.Policy.Eviction.Policy == EvictionPolicy.Lru ? 0 : 1)
                .ThenBy(o => o.Policy.Eviction.SizeThresholdBytes)
                .ThenBy(o => o.Policy.Prewarm ? 0 : 1),
        ];
    }
}
