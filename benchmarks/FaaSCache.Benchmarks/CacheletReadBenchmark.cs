using System.Runtime;

namespace FaaSCache.Benchmarks;

/// <summary>
/// cachelet-read: read latency of a cachelet's local hit (local and strong presets) and local miss,
/// against a plain blob download, Redis, MemoryCache and a bare conditional request, for objects of
/// 1 KB to 128 MB, all in one process run against its own Azurite, redis-server and shared-memory folder.
/// </summary>
internal static class CacheletReadBenchmark
{
    public const string Name = "cachelet-read";

    /// <summary>Canonical path order (tables and CSV).</summary>
    public static readonly string[] PathNames = ["lh", "lh_strong", "lm", "storage_direct", "redis", "memorycache", "conditional_head"];

    public static readonly long[] Sizes = [1L << 10, 64L << 10, 1L << 20, 16L << 20, 128L << 20];

    private const int Seed = 20211101;

    /// <summary>
    /// At the first size each group of paths warms up for at least this long, until tiered compilation
    /// and dynamic PGO have settled (with less, in-process reads at 1 KB measured 2-3x slower than later).
    /// </summary>
    private static readonly TimeSpan JitWarmup = TimeSpan.FromSeconds(3);

    public static async Task RunAsync(BenchmarkContext context)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        var total = Stopwatch.StartNew();
        context.WriteHeader(Name);

        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        await using RedisServer redis = await RedisServer.StartAsync(ct);
        output.WriteLine($"redis-server: {redis.Endpoint} (pid {redis.ProcessId})");
        using var shm = new TempShmDirectory("faascache-bench");
        output.WriteLine($"shared memory: {shm.Path}; cachelet capacity {CacheletReadRig.CacheletCapacityBytes >> 20} MiB");
        await using CacheletReadRig rig = await CacheletReadRig.CreateAsync(azurite, redis, shm.Path, ct);

        var results = new List<PathResult>();
        for (int i = 0; i < Sizes.Length; i++)
        {
            long size = Sizes[i];
            var sizeClock = Stopwatch.StartNew();
            await output.ShowAsync($"{SizeLabel(size),7}: loading...", ct);
            IReadOnlyList<ReadPath> paths = await rig.LoadAsync(size, Seed + i, ct);
            await output.ShowAsync($" {sizeClock.Elapsed.TotalSeconds:0.0} s; warming up and measuring...", ct);

            // Two groups, each warmed up and then measured interleaved: the network paths, then the
            // in-process ones (lh, memorycache) in a loop of their own. Interleaved with network reads
            // they would mostly measure the cold caches and thread hop that follow an await, and how
            // often that happens differs by size.
            var groups = paths.GroupBy(p => p.Kind == PathKind.InProcess).OrderBy(g => g.Key).Select(g => g.ToList()).ToList();
            var samples = paths.ToDictionary(p => p.Name, p => new LatencySamples(Iterations(p.Kind, size, context.Quick)));
            foreach (List<ReadPath> group in groups)
            {
                await Interleaved.WarmUpAsync(group, p => Warmup(Iterations(p.Kind, size, context.Quick)), i == 0 ? JitWarmup : TimeSpan.Zero, ct);
                await Interleaved.RunAsync(group, p => Iterations(p.Kind, size, context.Quick), samples, ct);
            }

            results.AddRange(paths.Select(p => new PathResult(
                p.Name,
                size,
                samples[p.Name].PercentileMicroseconds(50),
                samples[p.Name].PercentileMicroseconds(99),
                samples[p.Name].Count)));
            await rig.UnloadAsync(size, ct);
            output.WriteLine($" done in {sizeClock.Elapsed.TotalSeconds:0.0} s");
        }

        output.WriteLine(rig.Counters());
        output.WriteLine();
        CacheletReadReport.Print(output, results, context.Quick);
        string csv = CacheletReadReport.WriteCsv(context.ResultsDirectory, results);
        output.WriteLine();
        output.WriteLine($"wrote {csv}");
        output.WriteLine($"measured in {total.Elapsed.TotalSeconds:0} s (servers stop next)");
    }

    /// <summary>
    /// Iterations per path and size: 10,000+ where a read is cheap, so p99 rests on 100+ samples;
    /// a few dozen for transfers of 128 MB (a download from Azurite takes a few hundred ms). A full run
    /// takes about 4 minutes on 2 cores; --quick a tenth of the iterations (at least 3).
    /// </summary>
    public static int Iterations(PathKind kind, long size, bool quick)
    {
        int full = (kind, size) switch
        {
            (PathKind.InProcess, _) => 100_000,
            (PathKind.RoundTrip, _) => 10_000,
            (_, <= 64L << 10) => 10_000,
            (PathKind.Redis, <= 1L << 20) => 3_000,
            (PathKind.Redis, <= 16L << 20) => 500,
            (PathKind.Redis, _) => 50,
            (_, <= 1L << 20) => 2_000,
            (_, <= 16L << 20) => 300,
            _ => 30,
        };
        return quick ? Math.Max(3, full / 10) : full;
    }

    private static int Warmup(int iterations) => Math.Clamp(iterations / 20, 1, 200);

    public static string SizeLabel(long size) => ReportFormat.SizeLabel(size);
}

/// <summary>One row of the result: p50/p99 in microseconds over n timed reads.</summary>
internal sealed record PathResult(string Path, long SizeBytes, double P50Us, double P99Us, int N);
