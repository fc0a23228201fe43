namespace FaaSCache.Simulation.Engine;

/// <summary>One host.json policy set to simulate (consistency aside): capacity, eviction, and pre-warm.</summary>
public sealed record PolicySet
{
    /// <summary>Gets the cache capacity of each cachelet (<c>capacityBytes</c>).</summary>
    public required long CapacityBytes { get; init; }

    /// <summary>Gets the eviction settings (<c>eviction</c>: policy, size threshold, TTL).</summary>
    public EvictionOptions Eviction { get; init; } = new();

    /// <summary>Gets a value indicating whether the Load Daemon pre-warms at load (<c>prewarm.enabled</c>).</summary>
    public bool Prewarm { get; init; }

    /// <summary>Gets the pre-warm hit-rate threshold (<c>prewarm.hitRateThreshold</c>).</summary>
    public double HitRateThreshold { get; init; } = new PrewarmOptions().HitRateThreshold;

    /// <summary>
    /// Gets how long the app stays loaded without invocations (the platform's unload period, Fig. 8's lines without
    /// pre-warm); null: <see cref="SimulationOptions.UnloadAfterIdle"/>.
    /// </summary>
    public TimeSpan? UnloadAfterIdle { get; init; }

    /// <summary>
    /// Gets when the app is unloaded and loaded again; null: the hybrid histogram for a set that pre-warms and names no
    /// unload period (Faa$T §3.3: the Load Daemon pre-warms when the histogram loads the app ahead of its predicted
    /// invocation), else the fixed unload period.
    /// </summary>
    public KeepAliveRule? KeepAlive { get; init; }

    /// <summary>Gets the keep-alive rule the replay runs (<see cref="KeepAlive"/> resolved).</summary>
    public KeepAliveRule EffectiveKeepAlive => KeepAlive ?? (Prewarm && UnloadAfterIdle is null ? KeepAliveRule.HybridHistogram : KeepAliveRule.Fixed);

    /// <summary>Gets a short label, e.g. <c>128MB lru prewarm</c>.</summary>
    public string Label => string.Create(
        CultureInfo.InvariantCulture,
        $"{CapacityBytes >> 20}MB {(Eviction.Policy == EvictionPolicy.Size ? $"size>{Eviction.SizeThresholdBytes}B" : "lru")}" +
        $"{(Eviction.Ttl is { } ttl ? $" ttl={ttl}" : string.Empty)} {(Prewarm ? "prewarm" : "no-prewarm")}" +
        $"{(UnloadAfterIdle is { } idle ? $" unload={idle.TotalMinutes:0.#}min" : string.Empty)}" +
        $"{(EffectiveKeepAlive == KeepAliveRule.HybridHistogram ? " hybrid-histogram" : string.Empty)}");

    /// <summary>The <c>extensions.faasCache</c> fragment of host.json that selects this set.</summary>
    /// <returns>Indented JSON.</returns>
    public string ToHostJson()
    {
        string policy = Eviction.Policy == EvictionPolicy.Size ? "size" : "lru";
        string ttl = Eviction.Ttl is { } t ? $"\"{t.ToString("c", CultureInfo.InvariantCulture)}\"" : "null";
        return string.Create(
            CultureInfo.InvariantCulture,
            $$"""
            {
              "version": "2.0",
              "extensions": {
                "faasCache": {
                  "capacityBytes": {{CapacityBytes}},
                  "eviction": { "policy": "{{policy}}", "sizeThresholdBytes": {{Eviction.SizeThresholdBytes}}, "ttl": {{ttl}} },
                  "prewarm": { "enabled": {{(Prewarm ? "true" : "false")}}, "hitRateThreshold": {{HitRateThreshold}} }
                }
              }
            }
            """);
    }
}
