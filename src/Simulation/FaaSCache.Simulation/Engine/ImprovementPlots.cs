using ScottPlot;

namespace FaaSCache.Simulation.Engine;

/// <summary>The paper's Fig. 8 as two PNGs: the CDF of per-app improvement at one cache size, and the average by size.</summary>
public static class ImprovementPlots
{
    private static readonly bool[] PrewarmOnOff = [true, false];

    /// <summary>
    /// The paper's Fig. 8 (left) where its text gives a number: with a 128 MB cache and pre-warm, "50% or more for ~35%
    /// of applications", i.e. 65% of apps below 50% (the figure's curve itself is not published as data).
    /// </summary>
    public static (double ImprovementPct, double CdfPct, string Label) PaperPoint { get; } = (50, 65, "paper (§6.2 text): ~35% of apps at >= 50%, 128 MB, pre-warm");

    /// <summary>Plots the CDF over apps of the improvement over no cache, one line per policy set given, and <see cref="PaperPoint"/>.</summary>
    /// <param name="path">The PNG to write.</param>
    /// <param name="title">The plot title.</param>
    /// <param name="series">(label, per-app results, latency model index) per line.</param>
    public static void SaveCdf(string path, string title, IEnumerable<(string Label, IReadOnlyList<AppResult> Results, int Model)> series)
    {
        ArgumentNullException.ThrowIfNull(series);
        var plot = new Plot();
        var paper = plot.Add.Marker(PaperPoint.ImprovementPct, PaperPoint.CdfPct, MarkerShape.OpenDiamond, size: 14);
        paper.LegendText = PaperPoint.Label;
        foreach ((string label, IReadOnlyList<AppResult> results, int model) in series)
        {
            double[] xs = results.Select(r => r.ImprovementPctFor(model)).Order().ToArray();
            double[] ys = xs.Select((_, i) => 100.0 * (i + 1) / xs.Length).ToArray();
            var line = plot.Add.ScatterLine(xs, ys);
            line.LegendText = label;
        }

        plot.Title(title);
        plot.XLabel("improvement over blob storage (%)");
        plot.YLabel("CDF of applications (%)");
        plot.ShowLegend(Alignment.LowerRight);
        plot.SavePng(path, 900, 600);
    }

    /// <summary>
    /// Plots the average improvement against the cache size: per series, one line with and one without pre-warm, and one
    /// per other unload period the summaries hold (Fig. 8's lines without pre-warm), and the paper's one published point.
    /// </summary>
    /// <param name="path">The PNG to write.</param>
    /// <param name="title">The plot title.</param>
    /// <param name="series">(label, summaries of the size sweep) per latency model.</param>
    public static void SaveAverageBySize(string path, string title, IEnumerable<(string Label, IReadOnlyList<PolicySummary> Summaries)> series)
    {
        ArgumentNullException.ThrowIfNull(series);
        var plot = new Plot();
        var paper = plot.Add.Marker(Math.Log2(128), 40, MarkerShape.OpenDiamond, size: 14);
        paper.LegendText = "paper (§6.2 text): average over 40%, 128 MB, pre-warm";
        foreach ((string label, IReadOnlyList<PolicySummary> summaries) in series)
        {
            foreach (var group in summaries.GroupBy(s => (s.Policy.Prewarm, s.Policy.UnloadAfterIdle)).OrderBy(g => PrewarmOnOff.AsSpan().IndexOf(g.Key.Prewarm)).ThenBy(g => g.Key.UnloadAfterIdle))
            {
                var points = group.OrderBy(s => s.Policy.CapacityBytes).ToArray();
                var line = plot.Add.Scatter(points.Select(s => Math.Log2(s.Policy.CapacityBytes >> 20)).ToArray(), points.Select(s => s.AvgImprovementPct).ToArray());
                line.LegendText = $"{label}, {(group.Key.Prewarm ? "with" : "without")} pre-warm{(group.Key.UnloadAfterIdle is { } idle ? string.Create(CultureInfo.InvariantCulture, $", unload after {idle.TotalMinutes:0.#} min") : string.Empty)}{(points[0].Policy.EffectiveKeepAlive == KeepAliveRule.HybridHistogram ? ", hybrid-histogram keep-alive" : string.Empty)}";
            }
        }

        plot.Title(title);
        plot.XLabel("cache size per cachelet (log2 MB: 5 = 32 MB .. 10 = 1 GB)");
        plot.YLabel("average improvement (%)");
        plot.ShowLegend(Alignment.LowerRight);
        plot.SavePng(path, 900, 600);
    }
}
