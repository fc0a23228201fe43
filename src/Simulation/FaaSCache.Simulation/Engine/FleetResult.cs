namespace FaaSCache.Simulation.Engine;

/// <summary>The per-app results of each policy set of a fleet run.</summary>
public sealed class FleetResult
{
    internal FleetResult(IReadOnlyList<PolicySet> policies, IReadOnlyList<IReadOnlyList<AppResult>> results, long accesses)
    {
        Policies = policies;
        Results = results;
        Accesses = accesses;
    }

    /// <summary>Gets the policy sets, in the order given.</summary>
    public IReadOnlyList<PolicySet> Policies { get; }

    /// <summary>Gets the per-app results of each policy set (same order as <see cref="Policies"/>).</summary>
    public IReadOnlyList<IReadOnlyList<AppResult>> Results { get; }

    /// <summary>Gets the accesses replayed (each under every policy set).</summary>
    public long Accesses { get; }

    /// <summary>The summary of each policy set (Fig. 8's numbers) under latency model <paramref name="model"/>.</summary>
    /// <param name="model">The latency model's index.</param>
    /// <returns>One summary per policy set.</returns>
    public IReadOnlyList<PolicySummary> Summaries(int model = 0) => Policies.Select((p, i) => PolicySummary.Of(p, Results[i], model)).ToList();
}
