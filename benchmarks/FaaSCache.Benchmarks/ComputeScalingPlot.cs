using ScottPlot;

namespace FaaSCache.Benchmarks;

/// <summary>The compute-scaling PNG: p50/p99 latency (left axis) and the instance count (right axis) over time.</summary>
internal static class ComputeScalingPlot
{
    public static void Save(IReadOnlyList<ScalingRow> rows, string path)
    {
        var plot = new Plot();
        double[] t = [.. rows.Select(r => (double)r.Second)];
        var p50 = plot.Add.Scatter(t, [.. rows.Select(r => r.P50Ms)]);
        p50.LegendText = "p50 latency (ms)";
        p50.MarkerSize = 0;
        var p99 = plot.Add.Scatter(t, [.. rows.Select(r => r.P99Ms)]);
        p99.LegendText = "p99 latency (ms)";
        p99.MarkerSize = 0;
        var rps = plot.Add.Scatter(t, [.. rows.Select(r => (double)r.Rps)]);
        rps.LegendText = "answered requests/s";
        rps.MarkerSize = 0;
        rps.Axes.YAxis = plot.Axes.Right;
        var instances = plot.Add.Scatter(t, [.. rows.Select(r => r.Instances * 10.0)]);
        instances.LegendText = "ready instances (x10 on the right axis)";
        instances.ConnectStyle = ConnectStyle.StepHorizontal;
        instances.LineWidth = 3;
        instances.MarkerSize = 0;
        instances.Axes.YAxis = plot.Axes.Right;
        plot.Title("compute-scaling: load ramp through the front door");
        plot.XLabel("time (s)");
        plot.YLabel("latency (ms)");
        plot.Axes.Right.Label.Text = "requests/s; instances x10";
        plot.ShowLegend(Alignment.UpperRight);
        plot.SavePng(path, 1200, 600);
    }
}
