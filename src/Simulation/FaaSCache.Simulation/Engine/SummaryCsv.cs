using System.Text;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// The simulate benchmark's CSV: <c>profile,cache_mb,prewarm,avg_improvement_pct,p50_improvement_pct,apps_over_50pct_share,unload_min,preset,version_check_ms,miss</c>,
/// one row per <see cref="Pricing"/> and policy set (<c>unload_min</c>: the unload period, Fig. 8's lines without
/// pre-warm, or <c>hybrid</c> where the hybrid histogram decided it; <c>version_check_ms</c>: what a <c>strong</c> hit paid, 0 under <c>owner</c>; <c>miss</c>: <c>measured</c>
/// for vanilla plus this implementation's overhead, <c>vanilla</c> without it).
/// </summary>
public static class SummaryCsv
{
    /// <summary>The header line.</summary>
    public const string Header = "profile,cache_mb,prewarm,avg_improvement_pct,p50_improvement_pct,apps_over_50pct_share,unload_min,preset,version_check_ms,miss";

    /// <summary>Writes the summaries to <paramref name="path"/>, each group under its pricing.</summary>
    /// <param name="path">The CSV file to create.</param>
    /// <param name="pricings">The summaries, by pricing.</param>
    /// <param name="unloadAfterIdle">The unload period of a policy set that names none (<see cref="SimulationOptions.UnloadAfterIdle"/>).</param>
    public static void Write(string path, IEnumerable<(Pricing Pricing, IEnumerable<PolicySummary> Summaries)> pricings, TimeSpan unloadAfterIdle)
    {
        ArgumentNullException.ThrowIfNull(pricings);
        var text = new StringBuilder().AppendLine(Header);
        foreach ((Pricing pricing, IEnumerable<PolicySummary> summaries) in pricings)
        {
            foreach (PolicySummary s in summaries)
            {
                text.AppendLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"{pricing.Profile},{s.Policy.CapacityBytes >> 20},{(s.Policy.Prewarm ? "true" : "false")},{s.AvgImprovementPct:F2},{s.P50ImprovementPct:F2},{s.AppsOver50PctShare:F4},{UnloadColumn(s.Policy, unloadAfterIdle)},{pricing.Preset},{pricing.VersionCheckMs:0.###},{pricing.Miss}"));
            }
        }

        File.WriteAllText(path, text.ToString());
    }

    /// <summary>The <c>unload_min</c> of <paramref name="policy"/>: its fixed unload period in minutes, or <c>hybrid</c>.</summary>
    private static string UnloadColumn(PolicySet policy, TimeSpan unloadAfterIdle) => policy.EffectiveKeepAlive == KeepAliveRule.HybridHistogram
        ? Hybrid
        : (policy.UnloadAfterIdle ?? unloadAfterIdle).TotalMinutes.ToString("0.##", CultureInfo.InvariantCulture);

    private const string Hybrid = "hybrid";

    /// <summary>Reads a file written by <see cref="Write"/>.</summary>
    /// <param name="path">The CSV file.</param>
    /// <returns>Its rows.</returns>
    /// <exception cref="FormatException">The header is not <see cref="Header"/>.</exception>
    public static IReadOnlyList<SummaryRow> Read(string path)
    {
        string[] lines = File.ReadAllLines(path);
        if (lines.Length == 0 || lines[0] != Header)
        {
            throw new FormatException($"'{path}' does not start with the header '{Header}'.");
        }

        static double Number(string text) => double.Parse(text, CultureInfo.InvariantCulture);
        return [.. lines.Skip(1).Where(l => l.Length > 0).Select(l => l.Split(',')).Select(f => new SummaryRow(
            f[0], long.Parse(f[1], CultureInfo.InvariantCulture), bool.Parse(f[2]), Number(f[3]), Number(f[4]), Number(f[5]), f[6] == Hybrid ? null : Number(f[6]), f[7], Number(f[8]), f[9]))];
    }
}

/// <summary>One row of <see cref="SummaryCsv"/>.</summary>
/// <param name="Profile">The storage profile.</param>
/// <param name="CacheMb">The cache per cachelet, MB.</param>
/// <param name="Prewarm">Whether the Load Daemon pre-warmed.</param>
/// <param name="AvgPct">The average improvement over apps, %.</param>
/// <param name="P50Pct">The median app's improvement, %.</param>
/// <param name="Over50Share">The share of apps improved by 50% or more.</param>
/// <param name="UnloadMinutes">The fixed unload period, minutes; null: the hybrid histogram decided it.</param>
/// <param name="Preset">strong or owner.</param>
/// <param name="VersionCheckMs">What a strong hit's version check cost, ms.</param>
/// <param name="Miss">measured or vanilla.</param>
public sealed record SummaryRow(string Profile, long CacheMb, bool Prewarm, double AvgPct, double P50Pct, double Over50Share, double? UnloadMinutes, string Preset, double VersionCheckMs, string Miss);
