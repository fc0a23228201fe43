namespace FaaSCache.Benchmarks;

/// <summary>invoke's table (Markdown, so it pastes into the README as printed) and its CSVs.</summary>
internal static class InvokeReport
{
    public const string CsvHeader = "language,path,size_bytes,p50_ms,p99_ms,n";

    /// <summary>The issue's aim: at the largest size a Python local hit is at least this many times faster than vanilla.</summary>
    private const double PythonTarget = 20;

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static void Print(TextWriter output, IReadOnlyList<InvokeResult> results, bool quick)
    {
        long smallest = results.Min(r => r.SizeBytes);
        long largest = results.Max(r => r.SizeBytes);
        output.WriteLine($"End-to-end invocation latency, milliseconds (client Stopwatch around one HTTP GET; nearest-rank percentiles; {(quick ? "quick" : "full")} mode)");
        output.WriteLine("host p50: p50 of the host's own durationMs for the same series (/admin/invocations: bind inputs, worker round trip, outputs);");
        output.WriteLine("copied: bytes the host copied in memory to hand the input to the worker. Ratios of p50s, on the lh row.");
        output.WriteLine();
        output.WriteLine("| language | input access | size | path | p50 ms | p99 ms | n | host p50 ms | copied | vanilla / lh | lm / lh | lh flat? |");
        output.WriteLine("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (BenchFunction function in Measured(results))
        {
            foreach (long size in Sizes(results))
            {
                foreach (string path in InvokeRig.PathNames)
                {
                    InvokeResult r = Find(results, function, path, size);
                    string ratios = path == InvokeRig.LocalHit
                        ? $"{ReportFormat.Ratio(Find(results, function, InvokeRig.Vanilla, size).P50Ms / r.P50Ms)} " +
                          $"| {ReportFormat.Ratio(Find(results, function, InvokeRig.LocalMiss, size).P50Ms / r.P50Ms)} " +
                          $"| {ReportFormat.Ratio(r.P50Ms / Find(results, function, InvokeRig.LocalHit, smallest).P50Ms)}"
                        : " | | ";
                    output.WriteLine(
                        $"| {function.Language} | {function.Access} | {ReportFormat.SizeLabel(size)} | {path} " +
                        $"| {ReportFormat.Latency(r.P50Ms)} | {ReportFormat.Latency(r.P99Ms)} | {ReportFormat.Count(r.N)} " +
                        $"| {(r.Host is { } h ? ReportFormat.Latency(h.P50Ms) : "?")} | {Copied(r.Host)} | {ratios} |");
                }
            }
        }

        output.WriteLine();
        output.WriteLine("Baseline: the same HTTP invocation without a blob input (function Ping on the cache-on host, interleaved with the series above)");
        output.WriteLine();
        output.WriteLine("| language | size (measured with) | no input p50 ms | p99 ms | n | host p50 ms | lh p50 - no input p50 |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---|");
        foreach (BenchFunction baseline in InvokeRig.Baselines.Where(b => results.Any(r => r.Function == b)))
        {
            foreach (long size in Sizes(results))
            {
                InvokeResult b = Find(results, baseline, InvokeRig.NoInput, size);
                string extra = string.Join(", ", Measured(results)
                    .Where(f => f.Language == baseline.Language)
                    .Select(f => $"{f.Name} {Signed(Find(results, f, InvokeRig.LocalHit, size).P50Ms - b.P50Ms)} ms"));
                output.WriteLine(
                    $"| {baseline.Language} | {ReportFormat.SizeLabel(size)} | {ReportFormat.Latency(b.P50Ms)} | {ReportFormat.Latency(b.P99Ms)} " +
                    $"| {ReportFormat.Count(b.N)} | {(b.Host is { } h ? ReportFormat.Latency(h.P50Ms) : "?")} | {extra} |");
            }
        }

        output.WriteLine();
        foreach (BenchFunction function in Measured(results))
        {
            double vanilla = Find(results, function, InvokeRig.Vanilla, largest).P50Ms / Find(results, function, InvokeRig.LocalHit, largest).P50Ms;
            double flat = Find(results, function, InvokeRig.LocalHit, largest).P50Ms / Find(results, function, InvokeRig.LocalHit, smallest).P50Ms;
            string target = function.Language.StartsWith("python", StringComparison.Ordinal)
                ? $" (target >= {PythonTarget:0}x: {(vanilla >= PythonTarget ? "met" : "NOT met")})"
                : string.Empty;
            output.WriteLine(
                $"{function.Label}: vanilla / lh at {ReportFormat.SizeLabel(largest)} = {ReportFormat.Ratio(vanilla)}{target}; " +
                $"lh flat? lh p50 at {ReportFormat.SizeLabel(largest)} / at {ReportFormat.SizeLabel(smallest)} = {ReportFormat.Ratio(flat)}");
        }
    }

    /// <summary>
    /// Today's models against their function.json twins: per function, size and path, the p50 of the worker-indexed app
    /// over the function.json app's (the issue's aim: within 10%, i.e. 0.90x .. 1.10x, for the local hit).
    /// </summary>
    public static void PrintModelComparison(TextWriter output, IReadOnlyList<InvokeResult> results)
    {
        var pairs = new[] { ("python-v2", "python"), ("node-v4", "node") };
        output.WriteLine("Today's programming models against their function.json twins (p50 of the indexed app / p50 of the function.json app, same run)");
        output.WriteLine();
        output.WriteLine("| function | size | vanilla | lm | lh | lh within 10%? |");
        output.WriteLine("|---|---:|---:|---:|---:|---|");
        foreach ((string model, string legacy) in pairs)
        {
            foreach (BenchFunction function in Measured(results).Where(f => f.Language == model))
            {
                BenchFunction? twin = InvokeRig.Functions.FirstOrDefault(f => f.Language == legacy && f.Name == function.Name);
                if (twin is null || !results.Any(r => r.Function == twin))
                {
                    continue;
                }

                foreach (long size in Sizes(results))
                {
                    double Ratio(string path) => Find(results, function, path, size).P50Ms / Find(results, twin, path, size).P50Ms;
                    double lh = Ratio(InvokeRig.LocalHit);
                    output.WriteLine(
                        $"| {function.Language} {function.Name} | {ReportFormat.SizeLabel(size)} | {ReportFormat.Ratio(Ratio(InvokeRig.Vanilla))} " +
                        $"| {ReportFormat.Ratio(Ratio(InvokeRig.LocalMiss))} | {ReportFormat.Ratio(lh)} | {(Math.Abs(lh - 1) <= 0.10 ? "yes" : "NO")} |");
                }
            }
        }
    }

    /// <summary>
    /// The worker without shared memory (C# isolated) against its floor: the same bytes in a bare FunctionRpc message to
    /// a worker of the same app, no HTTP and no cache (the issue's aims: lh within 1.2x of the floor, and at least 2x
    /// faster than vanilla at the largest size).
    /// </summary>
    public static void PrintFloorComparison(TextWriter output, IReadOnlyList<InvokeResult> results)
    {
        List<BenchFunction> floored = [.. Measured(results).Where(f => results.Any(r => r.Function == f && r.Path == InvokeRig.Floor))];
        if (floored.Count == 0)
        {
            return;
        }

        long largest = results.Max(r => r.SizeBytes);
        output.WriteLine("A worker without shared memory (the bytes inside the message) against its floor: the same bytes in a bare FunctionRpc message to a worker of the same app (no HTTP, no cache)");
        output.WriteLine();
        output.WriteLine("| function | size | floor p50 ms | lh p50 ms | lh / floor (aim <= 1.2x) | vanilla p50 ms | vanilla / lh |");
        output.WriteLine("|---|---:|---:|---:|---:|---:|---:|");
        foreach (BenchFunction function in floored)
        {
            foreach (long size in Sizes(results))
            {
                InvokeResult floor = Find(results, function, InvokeRig.Floor, size);
                InvokeResult lh = Find(results, function, InvokeRig.LocalHit, size);
                InvokeResult vanilla = Find(results, function, InvokeRig.Vanilla, size);
                output.WriteLine(
                    $"| {function.Language} {function.Name} | {ReportFormat.SizeLabel(size)} | {ReportFormat.Latency(floor.P50Ms)} | {ReportFormat.Latency(lh.P50Ms)} " +
                    $"| {ReportFormat.Ratio(lh.P50Ms / floor.P50Ms)}{(lh.P50Ms / floor.P50Ms <= 1.2 ? string.Empty : " (NOT met)")} | {ReportFormat.Latency(vanilla.P50Ms)} " +
                    $"| {ReportFormat.Ratio(vanilla.P50Ms / lh.P50Ms)}{(size == largest ? (vanilla.P50Ms / lh.P50Ms >= 2 ? " (aim >= 2x: met)" : " (aim >= 2x: NOT met)") : string.Empty)} |");
            }
        }
    }

    /// <summary>
    /// Writes one CSV per file name of <see cref="InvokeRig.Functions"/> (invoke.csv: the headline function of each language);
    /// returns their paths. A run of some languages only replaces their rows and keeps the other languages' rows of the file.
    /// </summary>
    public static IReadOnlyList<string> WriteCsv(string directory, IReadOnlyList<InvokeResult> results, Func<string, string>? fileName = null, IReadOnlyCollection<string>? languagesRun = null)
    {
        var written = new List<string>();
        foreach (var file in Measured(results).GroupBy(f => f.CsvFileName!))
        {
            var rows = new List<string>();
            foreach (BenchFunction function in file)
            {
                foreach (long size in Sizes(results))
                {
                    foreach (string path in InvokeRig.PathNames.Append(InvokeRig.Floor))
                    {
                        if (results.FirstOrDefault(r => r.Function == function && r.Path == path && r.SizeBytes == size) is not { } r)
                        {
                            continue; // the floor exists for the worker without shared memory only
                        }

                        rows.Add(string.Create(Invariant, $"{function.Language},{path},{size},{r.P50Ms:0.###},{r.P99Ms:0.###},{r.N}"));
                    }
                }
            }

            string name = fileName?.Invoke(file.Key) ?? file.Key;
            string existing = Path.Combine(directory, name);
            if (languagesRun is not null && File.Exists(existing))
            {
                rows.InsertRange(0, File.ReadLines(existing).Skip(1).Where(l => l.Length > 0 && !languagesRun.Contains(l[..l.IndexOf(',', StringComparison.Ordinal)])));
            }

            written.Add(ResultsCsv.Write(directory, name, CsvHeader, rows));
        }

        return written;
    }

    /// <summary>The functions of <see cref="InvokeRig.Functions"/> this run measured, in table order.</summary>
    private static IEnumerable<BenchFunction> Measured(IReadOnlyList<InvokeResult> results) => InvokeRig.Functions.Where(f => results.Any(r => r.Function == f));

    private static string Signed(double ms) => (ms >= 0 ? "+" : "-") + ReportFormat.Latency(Math.Abs(ms));

    private static IEnumerable<long> Sizes(IReadOnlyList<InvokeResult> results) => results.Select(r => r.SizeBytes).Distinct().Order();

    private static InvokeResult Find(IReadOnlyList<InvokeResult> results, BenchFunction function, string path, long size) =>
        results.Single(r => r.Function == function && r.Path == path && r.SizeBytes == size);

    private static string Copied(HostSide? host) => host switch
    {
        null => "?",
        { MaxBytesCopied: 0 } => "0",
        { MinBytesCopied: var min, MaxBytesCopied: var max } when min == max => ReportFormat.SizeLabel(max),
        { MinBytesCopied: var min, MaxBytesCopied: var max } => $"{ReportFormat.SizeLabel(min)}..{ReportFormat.SizeLabel(max)}",
    };
}
