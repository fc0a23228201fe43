using FaaSCache.Bandwidth;
using FaaSCache.Host.Admin;

namespace FaaSCache.Benchmarks;

/// <summary>One timed fresh miss of the bandwidth-scaling benchmark.</summary>
/// <param name="SizeBytes">The object's size.</param>
/// <param name="Mode">single, scaled_running, scaled_cold, fixed, or fixed_again (a fixed N measured a second time: the floor of the comparison).</param>
/// <param name="Running">Instances running when the read started.</param>
/// <param name="Forced">The N forced (fixed, single), null when the planner chose.</param>
/// <param name="Seconds">The read's time on the host.</param>
/// <param name="N">Instances that downloaded a range (1: the requester alone).</param>
/// <param name="Reason">The planner's reason, for a scaled load.</param>
internal sealed record BandwidthSample(long SizeBytes, string Mode, int Running, int? Forced, double Seconds, int N, string? Reason);

/// <summary>The bandwidth-scaling table and <c>benchmarks/results/bandwidth-scaling.csv</c> (medians per size, mode and forced N).</summary>
internal static class BandwidthReport
{
    public const string CsvFileName = "bandwidth-scaling.csv";
    public const string CsvHeader = "size_bytes,mode,instances,seconds,n";

    /// <summary>The aim at the largest size: running instances at least this much faster than one.</summary>
    public const double SpeedupAim = 3.0;

    /// <summary>The aim: the planner's time within this fraction of the best fixed N's.</summary>
    public const double PlannerAim = 0.10;

    private static readonly string[] ModeOrder = ["single", "scaled_running", "scaled_cold", "fixed", "fixed_again"];
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>400 KB, 40 MB, 800 MB (decimal units, as the paper's sizes are).</summary>
    public static string SizeLabel(long size) => size >= 1_000_000
        ? string.Create(Invariant, $"{size / 1_000_000} MB")
        : string.Create(Invariant, $"{size / 1000} KB");

    /// <summary>A profile as one line: BW_BS, storage latency, BW_Inst, peer latency, T_Load, and a measured inbound limit if any.</summary>
    public static string Profile(HostTransferProfile p) =>
        $"BW_BS {Rate(p.StorageBytesPerSecond)}, storage latency {Ms(p.StorageLatencySeconds)}, " +
        $"BW_Inst {Rate(p.PeerBytesPerSecond)}, peer latency {Ms(p.PeerLatencySeconds)}, T_Load {(p.InstanceLoadSeconds is { } t ? t.ToString("0.00 s", Invariant) : "not measured")}" +
        (p.InboundBytesPerSecond is { } inbound ? $", inbound limit {Rate(inbound)} ({p.InboundSource ?? "a scaled load fell short"})" : "") +
        (p.InboundSuspicion is { } suspect ? $", suspected (one slow load, not yet confirmed: {suspect})" : "");

    /// <summary>
    /// The planner's reason for a read that was not split (the host reports a reason only for scaled loads), recomputed
    /// here from the profile the instance reported just before the read: why it kept one instance.
    /// </summary>
    public static string PlanReason(long size, int running, int maxInstances, HostTransferProfile p) =>
        BandwidthPlanner.Plan(size, running, maxInstances, new TransferProfile(
            p.StorageBytesPerSecond,
            p.StorageLatencySeconds is { } s ? TimeSpan.FromSeconds(s) : null,
            p.PeerBytesPerSecond,
            p.PeerLatencySeconds is { } l ? TimeSpan.FromSeconds(l) : null,
            p.InstanceLoadSeconds is { } t ? TimeSpan.FromSeconds(t) : null,
            p.InboundBytesPerSecond,
            p.InboundSource)).Reason;

    /// <summary>The median rows: one per size, mode and forced N, with the n of the median sample.</summary>
    public static IReadOnlyList<BandwidthRow> Medians(IEnumerable<BandwidthSample> samples) =>
        [.. samples
            .GroupBy(s => (s.SizeBytes, s.Mode, s.Forced))
            .Select(g =>
            {
                List<BandwidthSample> sorted = [.. g.OrderBy(s => s.Seconds)];
                BandwidthSample median = sorted[(sorted.Count - 1) / 2];
                return new BandwidthRow(g.Key.SizeBytes, g.Key.Mode, median.Running, g.Key.Forced, median.Seconds, median.N, sorted.Count);
            })
            .OrderBy(r => r.SizeBytes).ThenBy(r => Array.IndexOf(ModeOrder, r.Mode)).ThenBy(r => r.Forced ?? 0)];

    /// <summary>Prints the times per size and mode, the ratios vs single, and the planner's N against the best fixed N.</summary>
    public static void Print(TextWriter output, IReadOnlyList<BandwidthSample> samples, IReadOnlyList<long> sizes)
    {
        IReadOnlyList<BandwidthRow> rows = Medians(samples);
        int fixedMax = rows.Where(r => r.Mode == "fixed").Select(r => r.Forced ?? 0).DefaultIfEmpty(0).Max();
        bool cold = rows.Any(r => r.Mode == "scaled_cold");
        output.WriteLine($"Fresh miss read time, seconds on the host (median of {rows.Select(r => r.Count).DefaultIfEmpty(0).Max().ToString(Invariant)}); (n) = instances that downloaded a range");
        output.WriteLine();
        var header = new StringBuilder("| size | single | scaled_running | ");
        var rule = new StringBuilder("|---:|---:|---:|");
        if (cold)
        {
            header.Append("scaled_cold | ");
            rule.Append("---:|");
        }

        for (int n = 1; n <= fixedMax; n++)
        {
            header.Append(Invariant, $"fixed N={n} | ");
            rule.Append("---:|");
        }

        output.WriteLine(header.ToString().TrimEnd());
        output.WriteLine(rule);
        foreach (long size in sizes)
        {
            var line = new StringBuilder($"| {SizeLabel(size)} | {Cell(rows, size, "single", null)} | {Cell(rows, size, "scaled_running", null)} | ");
            if (cold)
            {
                line.Append(Cell(rows, size, "scaled_cold", null)).Append(" | ");
            }

            for (int n = 1; n <= fixedMax; n++)
            {
                line.Append(Cell(rows, size, "fixed", n)).Append(" | ");
            }

            output.WriteLine(line.ToString().TrimEnd());
        }

        output.WriteLine();
        output.WriteLine("Speed-up = single's time / the mode's time (above 1: faster than one instance)");
        output.WriteLine();
        output.WriteLine($"| size | scaled_running speed-up |{(cold ? " scaled_cold speed-up |" : string.Empty)} best fixed N speed-up | planner's N | best fixed N | planner time / best fixed time |");
        output.WriteLine($"|---:|---:|{(cold ? "---:|" : string.Empty)}---:|---:|---:|---:|");
        var plannerMisses = new List<string>();
        var floors = new List<string>();
        foreach (long size in sizes)
        {
            // The A/A pairs: the same fixed N in two cells of one run. The planner comparison cannot resolve less than their spread.
            double floor = rows.Where(r => r.SizeBytes == size && r.Mode == "fixed_again")
                .Select(again => (again, first: Find(rows, size, "fixed", again.Forced)))
                .Where(p => p.first is not null)
                .Select(p => Math.Max(p.again.Seconds / p.first!.Seconds, p.first.Seconds / p.again.Seconds))
                .DefaultIfEmpty(double.NaN)
                .Max();
            if (!double.IsNaN(floor))
            {
                floors.Add($"{SizeLabel(size)} {ReportFormat.Ratio(floor)}");
            }

            double single = Find(rows, size, "single", null)?.Seconds ?? double.NaN;
            BandwidthRow? planner = Find(rows, size, "scaled_running", null);
            BandwidthRow? best = rows.Where(r => r.SizeBytes == size && r.Mode == "fixed").MinBy(r => r.Seconds);
            double plannerRatio = planner is not null && best is not null ? planner.Seconds / best.Seconds : double.NaN;
            bool neverSplit = rows.Where(r => r.SizeBytes == size && r.Mode == "fixed").All(r => r.N == 1);
            if (plannerRatio > 1 + PlannerAim && !neverSplit)
            {
                plannerMisses.Add($"{SizeLabel(size)} ({ReportFormat.Ratio(plannerRatio)})");
            }

            string coldCell = cold ? $" {ReportFormat.Ratio(single / (Find(rows, size, "scaled_cold", null)?.Seconds ?? double.NaN))} |" : string.Empty;
            output.WriteLine(
                $"| {SizeLabel(size)} | {ReportFormat.Ratio(single / (planner?.Seconds ?? double.NaN))} |{coldCell} {ReportFormat.Ratio(single / (best?.Seconds ?? double.NaN))} " +
                $"| {planner?.N.ToString(Invariant) ?? "-"} | {BestLabel(best)} | {ReportFormat.Ratio(plannerRatio)} |");
        }

        long largest = sizes.Max();
        double speedup = (Find(rows, largest, "single", null)?.Seconds ?? double.NaN) / (Find(rows, largest, "scaled_running", null)?.Seconds ?? double.NaN);
        output.WriteLine();
        output.WriteLine($"aim: {SizeLabel(largest)} with running instances at least {SpeedupAim:0}x faster than single: {(speedup >= SpeedupAim ? "met" : "NOT met")} ({ReportFormat.Ratio(speedup)})");
        output.WriteLine(
            $"aim: the planner's N within {PlannerAim:P0} of the best fixed N's time (sizes that no N splits left out: every read there is the same one-instance read): " +
            (plannerMisses.Count == 0 ? "met" : "NOT met at " + string.Join(", ", plannerMisses)));
        if (floors.Count > 0)
        {
            output.WriteLine(
                $"floor of that comparison: the same fixed N ({string.Join(", ", BandwidthScalingBenchmark.AgainNs.Select(n => n.ToString(Invariant)))}) measured in two cells of this run differs by up to " +
                string.Join(", ", floors) + " (the larger of the two ratios)");
        }
    }

    /// <summary>Writes the median rows to <c>bandwidth-scaling.csv</c>: <c>size_bytes,mode,instances,seconds,n</c>.</summary>
    public static string WriteCsv(string directory, IEnumerable<BandwidthSample> samples) =>
        ResultsCsv.Write(directory, CsvFileName, CsvHeader, Medians(samples).Select(r => string.Create(Invariant, $"{r.SizeBytes},{r.Mode},{r.Running},{r.Seconds:0.0000},{r.N}")));

    /// <summary>The best fixed N, with the instances that really downloaded when fewer did (an object under 2 MiB is never split).</summary>
    private static string BestLabel(BandwidthRow? best) => best switch
    {
        null => "-",
        { Forced: { } n } when n != best.N => string.Create(Invariant, $"{n} (n={best.N})"),
        _ => best.Forced?.ToString(Invariant) ?? "-",
    };

    private static BandwidthRow? Find(IReadOnlyList<BandwidthRow> rows, long size, string mode, int? forced) =>
        rows.FirstOrDefault(r => r.SizeBytes == size && r.Mode == mode && (forced is null || r.Forced == forced));

    private static string Cell(IReadOnlyList<BandwidthRow> rows, long size, string mode, int? forced) =>
        Find(rows, size, mode, forced) is { } r ? $"{r.Seconds.ToString(r.Seconds < 1 ? "0.000" : "0.00", Invariant)} ({r.N.ToString(Invariant)})" : "-";

    private static string Rate(double? bytesPerSecond) => bytesPerSecond is { } b ? (b / 1e6).ToString("0 MB/s", Invariant) : "not measured";

    private static string Ms(double? seconds) => seconds is { } s ? (s * 1000).ToString("0.0 ms", Invariant) : "not measured";
}

/// <summary>One CSV row: the median of one size, mode and forced N.</summary>
internal sealed record BandwidthRow(long SizeBytes, string Mode, int Running, int? Forced, double Seconds, int N, int Count);
