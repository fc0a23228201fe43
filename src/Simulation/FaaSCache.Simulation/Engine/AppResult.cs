namespace FaaSCache.Simulation.Engine;

/// <summary>One app replayed under one policy set.</summary>
public sealed record AppResult
{
    /// <summary>Gets the app.</summary>
    public required string AppName { get; init; }

    /// <summary>Gets the most instances it ran on at once.</summary>
    public int Instances { get; init; }

    /// <summary>Gets the instances it ran on on average over the time it was loaded.</summary>
    public double MeanInstances { get; init; }

    /// <summary>Gets the scale-outs the voters (and urgent votes) made.</summary>
    public int ScaleOuts { get; init; }

    /// <summary>Gets the scale-ins the voters made.</summary>
    public int ScaleIns { get; init; }

    /// <summary>Gets the reads.</summary>
    public long Reads { get; init; }

    /// <summary>Gets the writes.</summary>
    public long Writes { get; init; }

    /// <summary>Gets the local hits.</summary>
    public long LocalHits { get; init; }

    /// <summary>Gets the local misses.</summary>
    public long LocalMisses { get; init; }

    /// <summary>Gets the remote hits.</summary>
    public long RemoteHits { get; init; }

    /// <summary>Gets the remote misses.</summary>
    public long RemoteMisses { get; init; }

    /// <summary>Gets reads of objects the cache cannot hold (bigger than its capacity), served by storage.</summary>
    public long Uncacheable { get; init; }

    /// <summary>Gets the objects pre-warmed over all loads.</summary>
    public long Prewarmed { get; init; }

    /// <summary>Gets the unloads.</summary>
    public long Unloads { get; init; }

    /// <summary>Gets the evictions over all cachelets.</summary>
    public long Evictions { get; init; }

    /// <summary>Gets the total access time without a cache under each latency model, in microseconds.</summary>
    public required IReadOnlyList<double> BaselineMicrosByModel { get; init; }

    /// <summary>Gets the total access time with the cache under each latency model, in microseconds.</summary>
    public required IReadOnlyList<double> CachedMicrosByModel { get; init; }

    /// <summary>Gets the total access time without a cache under the first latency model, in microseconds.</summary>
    public double BaselineMicros => BaselineMicrosByModel[0];

    /// <summary>Gets the total access time with the cache under the first latency model, in microseconds.</summary>
    public double CachedMicros => CachedMicrosByModel[0];

    /// <summary>Gets the improvement over no cache under the first latency model, in percent.</summary>
    public double ImprovementPct => ImprovementPctFor(0);

    /// <summary>The improvement over no cache under latency model <paramref name="model"/>, in percent (0 without accesses).</summary>
    /// <param name="model">The latency model's index.</param>
    /// <returns>The improvement.</returns>
    public double ImprovementPctFor(int model)
        => BaselineMicrosByModel[model] > 0 ? 100 * (BaselineMicrosByModel[model] - CachedMicrosByModel[model]) / BaselineMicrosByModel[model] : 0;

    /// <summary>Gets the share of reads that hit (local or remote).</summary>
    public double HitRate => Reads > 0 ? (double)(LocalHits + RemoteHits) / Reads : 0;

    /// <summary>Gets the mean access latency with the cache, in microseconds.</summary>
    public double MeanMicros => Reads + Writes > 0 ? CachedMicros / (Reads + Writes) : 0;
}
