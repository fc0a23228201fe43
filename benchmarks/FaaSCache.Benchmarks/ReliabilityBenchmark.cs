namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>reliability</c>: FaaSCache.Testing's reliability suite (<see cref="ReliabilitySuite"/>) with numbers: one row per
/// scenario in <c>benchmarks/results/reliability.csv</c> (<see cref="ReliabilityRow.CsvHeader"/>) and the soak's PNG. Fails
/// (exit code 1) on any of <see cref="ReliabilitySuite.Failures"/>: a sync preset lost an acknowledged write, a read was
/// partial, a map or process leaked, a survivor stopped serving, or <c>strong</c> / <c>owner</c> was not linearizable.
/// </summary>
internal static class ReliabilityBenchmark
{
    /// <summary>Runs the suite: <c>benchmarks/run reliability [--quick]</c>.</summary>
    public static async Task RunAsync(BenchmarkContext context)
    {
        context.WriteHeader("reliability");
        ReliabilitySuite.Mode mode = context.Quick ? ReliabilitySuite.Quick : ReliabilitySuite.Full;
        var wall = Stopwatch.StartNew();
        (List<ReliabilityRow> rows, IReadOnlyList<SoakSample> soak) = await ReliabilitySuite.RunAsync(mode, context.ResultsDirectory, context.Output, context.Cancellation);
        ReliabilitySoakPlot.Save(soak, Path.Combine(context.ResultsDirectory, "reliability-soak.png"));
        context.Output.WriteLine();
        ReliabilityRow.Print(context.Output, rows);
        string csv = ReliabilityRow.WriteCsv(context.ResultsDirectory, rows);
        context.Output.WriteLine();
        context.Output.WriteLine($"wrote {csv}; wall time {wall.Elapsed.TotalSeconds:0} s; load average at the end {MachineLoad.Average()}");
        IReadOnlyList<string> failures = ReliabilitySuite.Failures(rows);
        if (failures.Count > 0)
        {
            throw new InvalidOperationException($"reliability: {failures.Count} failures:{Environment.NewLine}{string.Join(Environment.NewLine, failures)}");
        }
    }
}
