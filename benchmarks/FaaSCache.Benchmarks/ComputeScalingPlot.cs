using ScottPlot;

namespace FaaSCache.Benchmarks;

/// <summary>The compute-scaling PNG: p50/p99 latency (left axis) and the instance count (right axis) over time.</summary>
internal static class ComputeScalingPlot
{
    public static void Save(IReadOnlyList<ScalingRow> rows, string path)
    {
        using var plot = new TimePlot(rows.Select(r => (double)r.Second));
        plot.Line(rows.Select(r => r.P50Ms), "p50 latency (ms)", right: false);
        plot.Line(rows.Select(r => r.P99Ms), "p99 latency (ms)", right: false);
        plot.Line(rows.Select(r => (double)r.Rps), "answered requests/s", right: true);
        var instances = plot.Line(rows.Select(r => r.Instances * 10.0), "ready instances (x10 on the right axis)", right: true);
        instances.ConnectStyle = ConnectStyle.StepHorizontal;
        instances.LineWidth = 3;
        plot.Save(path, "compute-scaling: load ramp through the front door", "latency (ms)", "requests/s; instances x10", Alignment.UpperRight);
    }
}
