namespace FaaSCache.Simulation.Engine;

/// <summary>One policy set over all apps: the numbers of the paper's Fig. 8.</summary>
/// <param name="Policy">The policy set.</param>
/// <param name="Apps">The apps replayed.</param>
/// <param name="AvgImprovementPct">The mean over apps of the improvement over no cache, in percent.</param>
/// <param name="P50ImprovementPct">The median over apps of the improvement, in percent.</param>
/// <param name="AppsOver50PctShare">The share (0..1) of apps improved by 50% or more.</param>
/// <param name="HitRate">The share of all reads that hit.</param>
public sealed record PolicySummary(PolicySet Policy, int Apps, double AvgImprovementPct, double P50ImprovementPct, double AppsOver50PctShare, double HitRate)
{
    /// <summary>Summarises per-app results.</summary>
    /// <param name="policy">The policy set.</param>
    /// <param name="results">Its per-app results.</param>
    /// <param name="model">The latency model's index.</param>
    /// <returns>The summary.</returns>
    public static PolicySummary Of(PolicySet policy, IReadOnlyList<AppResult> results, int model = 0)
    {
        ArgumentNullException.ThrowIfNull(results);
        double[] improvements = results.Select(r => r.ImprovementPctFor(model)).Order().ToArray();
        long reads = results.Sum(r => r.Reads);
        return new PolicySummary(
            policy,
            results.Count,
            improvements.Length > 0 ? improvements.Average() : 0,
            Median(improvements),
            improvements.Length > 0 ? (double)improvements.Count(i => i >= 50) / improvements.Length : 0,
            reads > 0 ? (double)results.Sum(r => r.LocalHits + r.RemoteHits) / reads : 0);
    }

    private static double Median(double[] sorted)
    {
        if (sorted.Length == 0)
        {
            return 0;
        }

        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
