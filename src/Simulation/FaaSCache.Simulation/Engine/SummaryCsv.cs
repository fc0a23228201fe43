using System.Globalization;
using System.Text;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// The simulate benchmark's CSV: <c>profile,cache_mb,prewarm,avg_improvement_pct,p50_improvement_pct,apps_over_50pct_share,unload_min</c>,
/// one row per storage profile and policy set (<c>unload_min</c>: the unload period, Fig. 8's lines without pre-warm).
/// </summary>
public static class SummaryCsv
{
    /// <summary>The header line.</summary>
    public const string Header = "profile,cache_mb,prewarm,avg_improvement_pct,p50_improvement_pct,apps_over_50pct_share,unload_min";

    /// <summary>Writes the summaries to <paramref name="path"/>, each group under its storage profile's name.</summary>
    /// <param name="path">The CSV file to create.</param>
    /// <param name="profiles">The summaries, by storage profile.</param>
    /// <param name="unloadAfterIdle">The unload period of a policy set that names none (<see cref="SimulationOptions.UnloadAfterIdle"/>).</param>
    public static void Write(string path, IEnumerable<(string Profile, IEnumerable<PolicySummary> Summaries)> profiles, TimeSpan unloadAfterIdle)
    {
        ArgumentNullException.ThrowIfNull(profiles);
        var text = new StringBuilder().AppendLine(Header);
        foreach ((string profile, IEnumerable<PolicySummary> summaries) in profiles)
        {
            foreach (PolicySummary s in summaries)
            {
                text.AppendLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"{profile},{s.Policy.CapacityBytes >> 20},{(s.Policy.Prewarm ? "true" : "false")},{s.AvgImprovementPct:F2},{s.P50ImprovementPct:F2},{s.AppsOver50PctShare:F4},{(s.Policy.UnloadAfterIdle ?? unloadAfterIdle).TotalMinutes:0.##}"));
            }
        }

        File.WriteAllText(path, text.ToString());
    }

    /// <summary>Reads a file written by <see cref="Write"/>.</summary>
    /// <param name="path">The CSV file.</param>
    /// <returns>Rows of (profile, cache MB, pre-warm, average %, median %, share of apps at 50% or more, unload minutes).</returns>
    /// <exception cref="FormatException">The header is not <see cref="Header"/>.</exception>
    public static IReadOnlyList<(string Profile, long CacheMb, bool Prewarm, double AvgPct, double P50Pct, double Over50Share, double UnloadMinutes)> Read(string path)
    {
        string[] lines = File.ReadAllLines(path);
        if (lines.Length == 0 || lines[0] != Header)
        {
            throw new FormatException($"'{path}' does not start with the header '{Header}'.");
        }

        return lines.Skip(1).Where(l => l.Length > 0).Select(l => l.Split(',')).Select(f => (
            f[0],
            long.Parse(f[1], CultureInfo.InvariantCulture),
            bool.Parse(f[2]),
            double.Parse(f[3], CultureInfo.InvariantCulture),
            double.Parse(f[4], CultureInfo.InvariantCulture),
            double.Parse(f[5], CultureInfo.InvariantCulture),
            double.Parse(f[6], CultureInfo.InvariantCulture))).ToList();
    }
}
