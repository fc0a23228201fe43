namespace FaaSCache.Benchmarks;

/// <summary>cachelet-read's tables (Markdown, so they paste into the README as printed) and its CSV.</summary>
internal static class CacheletReadReport
{
    public const string CsvFileName = "cachelet-read.csv";
    public const string CsvHeader = "path,size_bytes,p50_us,p99_us,n";

    private const long RedisTargetSize = 1L << 20;
    private const double RedisTarget = 10;
    private const double StrongOverheadTarget = 1.1;

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static void Print(TextWriter output, IReadOnlyList<PathResult> results, bool quick)
    {
        var bySize = results.GroupBy(r => r.SizeBytes).OrderBy(g => g.Key).ToList();
        output.WriteLine($"Read latency, microseconds (Stopwatch; nearest-rank percentiles; {(quick ? "quick" : "full")} mode)");
        output.WriteLine();
        output.WriteLine("| size | path | p50 µs | p99 µs | n |");
        output.WriteLine("|---:|---|---:|---:|---:|");
        foreach (var size in bySize)
        {
            foreach (PathResult r in size.OrderBy(r => Array.IndexOf(CacheletReadBenchmark.PathNames, r.Path)))
            {
                output.WriteLine($"| {CacheletReadBenchmark.SizeLabel(r.SizeBytes)} | {r.Path} | {Micros(r.P50Us)} | {Micros(r.P99Us)} | {r.N.ToString("#,0", Invariant)} |");
            }
        }

        double lhSmallest = P50(results, "lh", bySize[0].Key);
        output.WriteLine();
        output.WriteLine("Ratios of p50 latencies");
        output.WriteLine();
        output.WriteLine("| size | redis / lh | lh_strong / conditional_head | storage_direct / lh | lm / storage_direct | lh / lh at 1 KB |");
        output.WriteLine("|---:|---:|---:|---:|---:|---:|");
        foreach (var size in bySize)
        {
            long s = size.Key;
            output.WriteLine(
                $"| {CacheletReadBenchmark.SizeLabel(s)} " +
                $"| {Ratio(P50(results, "redis", s) / P50(results, "lh", s))} " +
                $"| {Ratio(P50(results, "lh_strong", s) / P50(results, "conditional_head", s))} " +
                $"| {Ratio(P50(results, "storage_direct", s) / P50(results, "lh", s))} " +
                $"| {Ratio(P50(results, "lm", s) / P50(results, "storage_direct", s))} " +
                $"| {Ratio(P50(results, "lh", s) / lhSmallest)} |");
        }

        output.WriteLine();
        if (bySize.Any(g => g.Key == RedisTargetSize))
        {
            double redis = P50(results, "redis", RedisTargetSize) / P50(results, "lh", RedisTargetSize);
            output.WriteLine(
                $"redis / lh at {CacheletReadBenchmark.SizeLabel(RedisTargetSize)}: {Ratio(redis)} " +
                $"(target >= {RedisTarget:0}x: {(redis >= RedisTarget ? "met" : "NOT met")})");
        }

        var strongMisses = bySize
            .Select(g => (g.Key, Ratio: P50(results, "lh_strong", g.Key) / P50(results, "conditional_head", g.Key)))
            .Where(x => x.Ratio > StrongOverheadTarget)
            .ToList();
        output.WriteLine(
            $"lh_strong / conditional_head <= {StrongOverheadTarget.ToString("0.0#", Invariant)}x: " +
            (strongMisses.Count == 0
                ? "met at every size"
                : "NOT met at " + string.Join(", ", strongMisses.Select(x => $"{CacheletReadBenchmark.SizeLabel(x.Key)} ({Ratio(x.Ratio)})"))));
        long largest = bySize[^1].Key;
        output.WriteLine(
            $"lh flat in size: lh p50 at {CacheletReadBenchmark.SizeLabel(largest)} / at {CacheletReadBenchmark.SizeLabel(bySize[0].Key)} = " +
            Ratio(P50(results, "lh", largest) / lhSmallest));
    }

    /// <summary>Writes the CSV (invariant culture, one row per path and size) and returns its path.</summary>
    public static string WriteCsv(string directory, IReadOnlyList<PathResult> results)
    {
        IEnumerable<PathResult> ordered = results.OrderBy(r => r.SizeBytes).ThenBy(r => Array.IndexOf(CacheletReadBenchmark.PathNames, r.Path));
        return ResultsCsv.Write(directory, CsvFileName, CsvHeader, ordered.Select(r => string.Create(Invariant, $"{r.Path},{r.SizeBytes},{r.P50Us:0.###},{r.P99Us:0.###},{r.N}")));
    }

    private static double P50(IReadOnlyList<PathResult> results, string path, long size) =>
        results.Single(r => r.Path == path && r.SizeBytes == size).P50Us;

    private static string Micros(double us) => ReportFormat.Latency(us);

    private static string Ratio(double ratio) => ReportFormat.Ratio(ratio);
}
