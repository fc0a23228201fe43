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

        using var plot = new TimePlot(samples.Select(s => s.Second));
        void Line(Func<SoakSample, double> measure, string label, bool right) => plot.Line(samples.Select(measure), label, right, markerSize: 4);

        Line(s => s.HostRssMb, "hosts' private memory (MB, sum of 3)", false);
        Line(s => s.WorkerRssMb, "workers' private memory (MB, sum of 3)", false);
        Line(s => s.P99Ms / 100, "p99 latency of the window (x100 ms, right axis)", true);
        Line(s => s.HostFds, "hosts' open fds", true);
        Line(s => s.WorkerFds, "workers' open fds", true);
        Line(s => s.Maps, "shared-memory maps", true);
        plot.Save(path, "reliability soak: 3 instances under owner, 1 KB .. 16 MB reads and writes", "MB", "fds; maps; p99 x100 ms", Alignment.UpperLeft);
    }
}
