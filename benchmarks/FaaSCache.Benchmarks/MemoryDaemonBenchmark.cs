using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using Azure.Storage.Blobs;
using FaaSCache.Diagnostics;
using FaaSCache.Host.Admin;
using FaaSCache.TestSupport;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>memory-daemon</c>: the paper's Table 5 (§3.4, §6.4). <c>benchmarks/apps/memory</c> (Python, numpy) sums column 0 of
/// a 350 MB float64 array (8 columns, stored as 8 row blocks read through the cache), then <c>Allocate</c> grows its
/// worker until the app's function memory is 96% of the app's memory limit, then the sum runs again (timed). Modes:
/// <c>no-daemon</c> (host.json <c>memoryLimitBytes</c> 1 TiB: the daemon never acts on the app's real limit),
/// <c>daemon</c> (<c>memoryLimitBytes</c> = the limit, default 10% headroom), <c>daemon-scale-out</c> (the same with a
/// second instance in the app's membership: the cache spread over two instances' memory, as the cache-size vote's
/// scale-out leaves it). This machine enforces no memory limit (cgroup v1), so <c>Allocate</c> charges the app as a
/// cgroup v2 <c>memory.max</c> would (host and worker private RSS plus the cache's tmpfs pages) and fails the step that
/// would pass the limit: that is <c>allocation_ok</c>.
/// </summary>
internal static class MemoryDaemonBenchmark
{
    public const string CsvFileName = "memory-daemon.csv";
    public const string CsvHeader = "mode,second_sum_ms,allocation_ok,n";

    private const long MiB = 1L << 20;
    private const long LimitBytes = 2048 * MiB;
    private const long NoDaemonHostLimit = 1L << 40;
    private const int Parts = 8;
    private const int Columns = 8;
    private const long ArrayBytes = 350 * MiB;
    private const string Container = "memarray";
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private static readonly string[] Modes = ["no-daemon", "daemon", "daemon-scale-out"];

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken cancellation = context.Cancellation;
        int n = context.Quick ? 1 : 3;
        context.WriteHeader("memory-daemon");
        output.WriteLine(string.Create(Invariant, $"350 MB array in {Parts} blocks, app memory limit {LimitBytes / MiB} MiB, allocation to 96% of it, {n} run(s) per mode; load average {ReportFormat.LoadAverage()}"));

        await using AzuriteServer azurite = await AzuriteServer.StartAsync(cancellation);
        double expected = await UploadArrayAsync(azurite.CreateServiceClient().GetBlobContainerClient(Container), cancellation);
        var rows = new List<(string Mode, double MeanMs, double SdMs, bool AllOk, int N)>();
        string run = Guid.NewGuid().ToString("N")[..6];
        foreach (string mode in Modes)
        {
            var times = new List<double>();
            bool allOk = true;
            for (int i = 0; i < n; i++)
            {
                cancellation.ThrowIfCancellationRequested();
                (double ms, bool ok) = await RunOnceAsync(mode, $"mem-{run}-{mode}-{i}", azurite, expected, output, cancellation);
                times.Add(ms);
                allOk &= ok;
            }

            double mean = times.Average();
            double sd = times.Count > 1 ? Math.Sqrt(times.Sum(t => (t - mean) * (t - mean)) / (times.Count - 1)) : 0;
            rows.Add((mode, mean, sd, allOk, n));
        }

        output.WriteLine();
        output.WriteLine($"{"mode",-18} {"second sum (ms)",18} {"allocation ok",14}");
        foreach ((string mode, double mean, double sd, bool ok, int count) in rows)
        {
            output.WriteLine($"{mode,-18} {ReportFormat.Latency(mean) + " ± " + ReportFormat.Latency(sd),18} {(ok ? "yes" : "no"),14}   (n={count})");
        }

        output.WriteLine("paper (Table 5): no daemon: allocation fails, sum = local hit; daemon: 678.6 ± 64.8 ms, ok; daemon + scaling: 502.9 ± 28.5 ms, ok");
        Directory.CreateDirectory(context.ResultsDirectory);
        string csv = Path.Combine(context.ResultsDirectory, CsvFileName);
        await File.WriteAllLinesAsync(csv, [CsvHeader, .. rows.Select(r => string.Create(Invariant, $"{r.Mode},{r.MeanMs:0.0},{(r.AllOk ? "true" : "false")},{r.N}"))], cancellation);
        output.WriteLine($"wrote {csv}");
    }

    private static async Task<(double Ms, bool Ok)> RunOnceAsync(string mode, string appName, AzuriteServer azurite, double expected, TextWriter output, CancellationToken cancellation)
    {
        long hostLimit = mode == "no-daemon" ? NoDaemonHostLimit : LimitBytes;
        using FunctionAppFolder app = BenchAppFolder.Copy("memory", json => BenchAppFolder.SetFaaSCache(json, "memoryLimitBytes", hostLimit));
        int instances = mode == "daemon-scale-out" ? 2 : 1;
        await using HostProcessCluster cluster = await HostProcessCluster.StartAsync(app.Path, azurite.ConnectionString, appName, instances, cancellationToken: cancellation);
        FaaSCacheHostProcess host = cluster[0].Host;
        using var http = new HttpClient { BaseAddress = host.BaseUri, Timeout = TimeSpan.FromMinutes(10) };

        double first = await SumAsync(http, expected, cancellation);
        CacheletCounters cached = (await host.GetStatusAsync(cancellation)).Count;
        using JsonDocument allocation = JsonDocument.Parse(await http.GetStringAsync(new Uri(string.Create(Invariant, $"api/allocate?limit={LimitBytes}&percent=96"), UriKind.Relative), cancellation));
        bool ok = allocation.RootElement.GetProperty("ok").GetBoolean();
        HostStatus between = await host.GetStatusAsync(cancellation);
        double second = await SumAsync(http, expected, cancellation);
        CacheletCounters after = (await host.GetStatusAsync(cancellation)).Count;
        CacheletCounters before = between.Count;
        output.WriteLine(string.Create(Invariant,
            $"{mode}: first sum {first:0} ms ({cached.BytesCached / MiB} MiB cached); allocation {(ok ? "ok" : "FAILED")} {allocation.RootElement.GetRawText()}; " +
            $"daemon evicted {between.Memory?.ObjectsEvicted ?? 0} object(s); second sum {second:0} ms: local hits {after.LocalHits - before.LocalHits}, " +
            $"local misses {after.LocalMisses - before.LocalMisses}, remote hits {after.RemoteHits - before.RemoteHits}, remote misses {after.RemoteMisses - before.RemoteMisses}"));
        return (second, ok);
    }

    private static async Task<double> SumAsync(HttpClient http, double expected, CancellationToken cancellation)
    {
        long t0 = Stopwatch.GetTimestamp();
        using HttpResponseMessage response = await http.GetAsync(new Uri("api/sum", UriKind.Relative), cancellation);
        string body = await response.Content.ReadAsStringAsync(cancellation);
        double ms = Stopwatch.GetElapsedTime(t0).TotalMilliseconds;
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"The sum answered {(int)response.StatusCode}: {body}");
        }

        double sum = JsonDocument.Parse(body).RootElement.GetProperty("sum").GetDouble();
        return sum == expected ? ms : throw new InvalidOperationException($"The sum was {sum}, expected {expected}.");
    }

    // Column 0 holds the global row index (its sum is exact in float64), the other columns 1.0.
    private static async Task<double> UploadArrayAsync(BlobContainerClient container, CancellationToken cancellation)
    {
        await container.CreateIfNotExistsAsync(cancellationToken: cancellation);
        long rowsPerPart = ArrayBytes / Parts / (Columns * sizeof(double));
        byte[] block = new byte[rowsPerPart * Columns * sizeof(double)];
        for (int p = 0; p < Parts; p++)
        {
            for (long r = 0; r < rowsPerPart; r++)
            {
                Span<byte> row = block.AsSpan((int)(r * Columns * sizeof(double)), Columns * sizeof(double));
                BinaryPrimitives.WriteDoubleLittleEndian(row, (p * rowsPerPart) + r);
                for (int c = 1; c < Columns; c++)
                {
                    BinaryPrimitives.WriteDoubleLittleEndian(row[(c * sizeof(double))..], 1.0);
                }
            }

            await container.GetBlobClient(string.Create(Invariant, $"part{p}.f64")).UploadAsync(new BinaryData(block), overwrite: true, cancellation);
        }

        long total = rowsPerPart * Parts;
        return total * (double)(total - 1) / 2;
    }
}
