using FaaSCache.Testing;
using ScottPlot;

namespace FaaSCache.Benchmarks;

/// <summary>The soak PNG: memory (left axis), file descriptors, maps and p99 latency in units of 100 ms (right axis) over time.</summary>
internal static class ReliabilitySoakPlot
{
    public static void Save(IReadOnlyList<SoakSample> samples, string path)
    {
        if (samples.Count == 0)
        {
            return;
        }

        var plot = new Plot();
        double[] t = [.. samples.Select(s => s.Second)];
        void Line(Func<SoakSample, double> measure, string label, bool right)
        {
            var line = plot.Add.Scatter(t, [.. samples.Select(measure)]);
            line.LegendText = label;
            line.MarkerSize = 4;
            if (right)
            {
                line.Axes.YAxis = plot.Axes.Right;
            }
        }

        Line(s => s.HostRssMb, "hosts' private memory (MB, sum of 3)", false);
        Line(s => s.WorkerRssMb, "workers' private memory (MB, sum of 3)", false);
        Line(s => s.P99Ms / 100, "p99 latency of the window (x100 ms, right axis)", true);
        Line(s => s.HostFds, "hosts' open fds", true);
        Line(s => s.WorkerFds, "workers' open fds", true);
        Line(s => s.Maps, "shared-memory maps", true);
        plot.Title("reliability soak: 3 instances under owner, 1 KB .. 16 MB reads and writes");
        plot.XLabel("time (s)");
        plot.YLabel("MB");
        plot.Axes.Right.Label.Text = "fds; maps; p99 x100 ms";
        plot.ShowLegend(Alignment.UpperLeft);
        plot.SavePng(path, 1200, 600);
    }
}
