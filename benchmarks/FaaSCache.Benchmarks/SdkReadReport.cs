using System.Globalization;
using System.Text;

namespace FaaSCache.Benchmarks;

/// <summary>sdk-read's tables (Markdown, so they paste into the README as printed), its targets and its CSV.</summary>
internal static class SdkReadReport
{
    public const string CsvFileName = "sdk-read.csv";
    public const string CsvHeader = "sdk,path,size_bytes,p50_us,p99_us,n";

    // Issue 24's targets: a hit at 1 MB at least 5x faster than the same SDK's download from storage; a miss at
    // 16 MB and 128 MB at most 1.15x that download.
    private const long HitTargetSize = 1L << 20;
    private const double HitTarget = 5;
    private static readonly long[] MissTargetSizes = [16L << 20, 128L << 20];
    private const double MissTarget = 1.15;

    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static void Print(TextWriter output, IReadOnlyList<SdkPathResult> results, IReadOnlyDictionary<(string Sdk, long Size), EndpointShare> endpointPerHit, bool quick)
    {
        output.WriteLine($"Download latency, microseconds (nearest-rank percentiles; {(quick ? "quick" : "full")} mode)");
        output.WriteLine();
        output.WriteLine("| size | sdk | path | p50 µs | p99 µs | n |");
        output.WriteLine("|---:|---|---|---:|---:|---:|");
        foreach (SdkPathResult r in Ordered(results))
        {
            output.WriteLine($"| {ReportFormat.SizeLabel(r.SizeBytes)} | {r.Sdk} | {r.Path} | {ReportFormat.Latency(r.P50Us)} | {ReportFormat.Latency(r.P99Us)} | {ReportFormat.Count(r.N)} |");
        }

        output.WriteLine();
        output.WriteLine("Ratios of p50 latencies: storage_direct / endpoint_hit (how much faster a hit is), endpoint_miss / storage_direct (what a miss");
        output.WriteLine("costs over the download it replaces), endpoint_hit / binding_hit (the endpoint's HTTP and the SDK over a binding's read of the same");
        output.WriteLine("bytes), storage_direct / client_floor (the most any server could make of a hit: the same SDK against a server that only answers");
        output.WriteLine("from memory), endpoint_hit / client_floor (what the endpoint adds to that); per hit, the endpoint's requests and its own time");
        output.WriteLine("(mean, from a request's arrival until its body is handed to the socket)");
        output.WriteLine();
        output.WriteLine("| size | sdk | direct p50 ms | hit p50 ms | miss p50 ms | floor p50 ms | direct / hit | miss / direct | hit / binding | direct / floor | hit / floor | requests per hit | endpoint ms per hit |");
        output.WriteLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (long size in results.Select(r => r.SizeBytes).Distinct().Order())
        {
            foreach (string sdk in SdkReadBenchmark.SdkNames)
            {
                double direct = P50(results, sdk, SdkReadBenchmark.StorageDirect, size);
                double hit = P50(results, sdk, SdkReadBenchmark.EndpointHit, size);
                double miss = P50(results, sdk, SdkReadBenchmark.EndpointMiss, size);
                double binding = P50(results, sdk, SdkReadBenchmark.BindingHit, size);
                double floor = P50(results, sdk, SdkReadBenchmark.ClientFloor, size);
                bool known = endpointPerHit.TryGetValue((sdk, size), out EndpointShare share);
                output.WriteLine(
                    $"| {ReportFormat.SizeLabel(size)} | {sdk} | {Millis(direct)} | {Millis(hit)} | {Millis(miss)} | {Millis(floor)} " +
                    $"| {ReportFormat.Ratio(direct / hit)} | {ReportFormat.Ratio(miss / direct)} | {ReportFormat.Ratio(hit / binding)} " +
                    $"| {ReportFormat.Ratio(direct / floor)} | {ReportFormat.Ratio(hit / floor)} " +
                    $"| {(known ? share.RequestsPerRead.ToString("0.#", Invariant) : "-")} | {(known ? Millis(share.ServerUsPerRead) : "-")} |");
            }
        }

        output.WriteLine();
        if (results.Any(r => r.SizeBytes == HitTargetSize))
        {
            var hits = SdkReadBenchmark.SdkNames
                .Select(sdk => (
                    Sdk: sdk,
                    Ratio: P50(results, sdk, SdkReadBenchmark.StorageDirect, HitTargetSize) / P50(results, sdk, SdkReadBenchmark.EndpointHit, HitTargetSize),
                    Bound: P50(results, sdk, SdkReadBenchmark.StorageDirect, HitTargetSize) / P50(results, sdk, SdkReadBenchmark.ClientFloor, HitTargetSize)))
                .ToList();
            output.WriteLine(
                $"endpoint_hit at {ReportFormat.SizeLabel(HitTargetSize)} >= {HitTarget:0}x faster than storage_direct (same SDK): " +
                string.Join(", ", hits.Select(h => $"{h.Sdk} {ReportFormat.Ratio(h.Ratio)} {(h.Ratio >= HitTarget ? "met" : "NOT met")} (client floor allows {ReportFormat.Ratio(h.Bound)})")));
        }

        var misses = SdkReadBenchmark.SdkNames
            .SelectMany(sdk => MissTargetSizes.Where(s => results.Any(r => r.SizeBytes == s)).Select(size => (Sdk: sdk, Size: size,
                Ratio: P50(results, sdk, SdkReadBenchmark.EndpointMiss, size) / P50(results, sdk, SdkReadBenchmark.StorageDirect, size))))
            .ToList();
        if (misses.Count > 0)
        {
            output.WriteLine(
                $"endpoint_miss / storage_direct <= {MissTarget.ToString("0.00", Invariant)}x at {string.Join(" and ", MissTargetSizes.Select(ReportFormat.SizeLabel))}: " +
                string.Join(", ", misses.Select(m => $"{m.Sdk} {ReportFormat.SizeLabel(m.Size)} {ReportFormat.Ratio(m.Ratio)} {(m.Ratio <= MissTarget ? "met" : "NOT met")}")));
        }
    }

    /// <summary>Writes the CSV (invariant culture, one row per SDK, path and size) as <paramref name="fileName"/> and returns its path.</summary>
    public static string WriteCsv(string directory, string fileName, IReadOnlyList<SdkPathResult> results)
    {
        Directory.CreateDirectory(directory);
        var csv = new StringBuilder();
        csv.Append(CsvHeader).Append('\n');
        foreach (SdkPathResult r in Ordered(results))
        {
            csv.Append(Invariant, $"{r.Sdk},{r.Path},{r.SizeBytes},{r.P50Us:0.###},{r.P99Us:0.###},{r.N}").Append('\n');
        }

        string path = Path.Combine(directory, fileName);
        File.WriteAllText(path, csv.ToString());
        return path;
    }

    private static IEnumerable<SdkPathResult> Ordered(IEnumerable<SdkPathResult> results) => results
        .OrderBy(r => r.SizeBytes)
        .ThenBy(r => Array.IndexOf(SdkReadBenchmark.SdkNames, r.Sdk))
        .ThenBy(r => Array.IndexOf(SdkReadBenchmark.PathNames, r.Path));

    /// <summary>The p50, or NaN where there is no such row (binding_hit for node and python).</summary>
    private static double P50(IReadOnlyList<SdkPathResult> results, string sdk, string path, long size) =>
        results.SingleOrDefault(r => r.Sdk == sdk && r.Path == path && r.SizeBytes == size)?.P50Us ?? double.NaN;

    private static string Millis(double us) => double.IsNaN(us) ? "-" : ReportFormat.Latency(us / 1000);
}
