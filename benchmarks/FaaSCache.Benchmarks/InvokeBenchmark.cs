using System.Runtime;

namespace FaaSCache.Benchmarks;

/// <summary>
/// invoke: end-to-end latency of an HTTP-triggered function with one blob input (HTTP request in, response
/// out, timed by the client) for inputs of 1 KB to 128 MB, in Python and Node, on three paths side by side:
/// vanilla (the FaaSCache host with <c>--cache off</c>, which sends the blob's bytes inside the gRPC message
/// as the stock Functions host does), lm (cache on, the input just removed from the cache: a local miss) and
/// lh (cache on, input cached: a local hit, the worker maps the cachelet's shared memory).
/// </summary>
internal static class InvokeBenchmark
{
    public const string Name = "invoke";

    public static readonly long[] Sizes = [1L << 10, 1L << 20, 16L << 20, 128L << 20];

    private const int Seed = 20211104;

    /// <summary>
    /// At the first size every series warms up for at least this long in all: the four hosts are fresh
    /// processes (tiered JIT, gRPC and Kestrel buffers, the workers' first imports and V8's JIT). With 5 s,
    /// 1 KB measured 3-6x slower than with 20 s on this loaded 2-CPU machine (the hosts' tier-1 compilation
    /// had not caught up).
    /// </summary>
    private static readonly TimeSpan FirstWarmup = TimeSpan.FromSeconds(20);

    public static async Task RunAsync(BenchmarkContext context)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        var total = Stopwatch.StartNew();
        context.WriteHeader(Name, "client: ");
        output.WriteLine($"host {FaaSCacheHostProcess.FindHostDll()}");

        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        IReadOnlyList<string> languages = InvokeRig.LanguagesFromEnvironment();
        await output.ShowAsync($"starting {2 * languages.Count} hosts ({string.Join(", ", languages)}; --cache on and off)...", ct);
        var startClock = Stopwatch.StartNew();
        await using InvokeRig rig = await InvokeRig.CreateAsync(azurite, languages: languages, cancellationToken: ct);
        output.WriteLine($" ready in {startClock.Elapsed.TotalSeconds:0.0} s");
        foreach (BenchHost host in rig.Hosts)
        {
            HostStatus status = await host.Process.GetStatusAsync(ct);
            output.WriteLine(
                $"  {host.Label,-22} pid {host.Process.ProcessId}, {host.Process.BaseUri}, worker pid {string.Join(",", status.Workers.Select(w => w.Pid))}, " +
                $"functions {string.Join(",", status.Functions)}, maps in {status.SharedMemory.Directory}");
        }

        if (languages.Contains("node"))
        {
            output.WriteLine($"  node worker's shared-memory inputs: {rig.NodeSharedMemoryMode()}");
        }
        output.WriteLine(InvokeRig.Consistency is { } preset
            ? $"  cache: consistency {preset} ({InvokeRig.ConsistencyVariable}); results go to invoke-{preset}.csv"
            : "  cache: the default host.json (consistency strong: each local hit checks the blob's ETag with one conditional request)");
        output.WriteLine($"load average before measuring: {MachineLoad.Average()}");

        var results = new List<InvokeResult>();
        for (int i = 0; i < Sizes.Length; i++)
        {
            long size = Sizes[i];
            var sizeClock = Stopwatch.StartNew();
            await output.ShowAsync($"{ReportFormat.SizeLabel(size),7}: uploading...", ct);
            InputBlob input = await rig.UploadAsync(size, Seed + i, ct);
            IReadOnlyList<InvokeSeries> series = rig.Series(input);
            Dictionary<string, CacheletCounters> before = await rig.CountersAsync(ct);
            await output.ShowAsync($" {sizeClock.Elapsed.TotalSeconds:0.0} s; warming up...", ct);

            await InvokeRig.CacheInputAsync(series, ct);

            TimeSpan warmup = await Interleaved.WarmUpAsync(series, s => Warmup(Iterations(s.Path, size, context.Quick)), i == 0 ? FirstWarmup : TimeSpan.Zero, ct);
            await output.ShowAsync($" {warmup.TotalSeconds:0.0} s; measuring...", ct);
            var samples = series.ToDictionary(s => s.Name, s => new LatencySamples(Iterations(s.Path, size, context.Quick)));
            DateTimeOffset measuring = DateTimeOffset.UtcNow;
            await Interleaved.RunAsync(series, s => Iterations(s.Path, size, context.Quick), samples, ct);

            Dictionary<string, CacheletCounters> after = await rig.CountersAsync(ct);
            CheckCounters(series, before, after);
            Dictionary<string, HostSide> hostSide = await InvokeRig.HostSideAsync(series, measuring, ct);
            foreach (InvokeSeries s in series)
            {
                LatencySamples taken = samples[s.Name];
                results.Add(new InvokeResult(
                    s.Function,
                    s.Path,
                    size,
                    taken.PercentileMilliseconds(50),
                    taken.PercentileMilliseconds(99),
                    taken.Count,
                    hostSide.GetValueOrDefault(s.Name)));
            }

            output.WriteLine($" done in {sizeClock.Elapsed.TotalSeconds:0.0} s (load average {MachineLoad.Average()})");
        }

        output.WriteLine($"measured in {total.Elapsed.TotalSeconds:0} s; load average after measuring: {MachineLoad.Average()}");
        output.WriteLine();
        InvokeReport.Print(output, results, context.Quick);
        output.WriteLine();
        InvokeReport.PrintModelComparison(output, results);
        output.WriteLine();
        InvokeReport.PrintFloorComparison(output, results);
        output.WriteLine();
        foreach (string csv in InvokeReport.WriteCsv(context.ResultsDirectory, results, name => context.ResultsFile(InvokeRig.Consistency is { } preset ? name.Replace(".csv", $"-{preset}.csv", StringComparison.Ordinal) : name), languages))
        {
            output.WriteLine($"wrote {csv}");
        }

        output.WriteLine();
        output.WriteLine("stopping the hosts (SIGTERM)...");
        foreach (string line in await rig.StopHostsAsync())
        {
            output.WriteLine($"  {line}");
        }

        output.WriteLine($"total {total.Elapsed.TotalSeconds:0} s (Azurite stops and temporary folders go next)");
    }

    /// <summary>
    /// Timed calls per series and size. Where a call is cheap: 500, so p99 rests on 5+ samples. Where a call
    /// moves the whole object (vanilla and lm take up to a second or two at 128 MB on this machine): 200 at
    /// 16 MB and 60 at 128 MB, where p99 is the slowest call but one; lh and the no-input baseline keep 500 and
    /// 300 there. A full run takes about 10 minutes on this machine, --quick a tenth of the calls (at least 3)
    /// and about 2.5 minutes.
    /// </summary>
    public static int Iterations(string path, long size, bool quick)
    {
        int full = (path, size) switch
        {
            (_, <= 1L << 20) => 500,
            (InvokeRig.LocalHit or InvokeRig.NoInput, <= 16L << 20) => 500,
            (InvokeRig.LocalHit or InvokeRig.NoInput, _) => 300,
            (_, <= 16L << 20) => 200,
            _ => 60,
        };
        return quick ? Math.Max(3, full / 10) : full;
    }

    private static int Warmup(int iterations) => Math.Clamp(iterations / 10, 1, 20);

    /// <summary>Every lm call must have been a local miss and every lh call a local hit: the cachelets' counters say so.</summary>
    public static void CheckCounters(IReadOnlyList<InvokeSeries> series, Dictionary<string, CacheletCounters> before, Dictionary<string, CacheletCounters> after)
    {
        foreach ((string language, CacheletCounters end) in after)
        {
            CacheletCounters start = before[language];
            int misses = series.Where(s => s.Function.Language == language && s.Path == InvokeRig.LocalMiss).Sum(s => s.Calls);
            int hits = series.Where(s => s.Function.Language == language && s.Path == InvokeRig.LocalHit).Sum(s => s.Calls);
            if (end.LocalMisses - start.LocalMisses != misses || end.LocalHits - start.LocalHits != hits)
            {
                throw new InvalidOperationException(
                    $"{language} --cache on: expected {misses} local misses and {hits} local hits, the cachelet counted " +
                    $"{end.LocalMisses - start.LocalMisses} and {end.LocalHits - start.LocalHits} (a path was not what its name says).");
            }
        }
    }
}

/// <summary>One row: client-side p50/p99 in milliseconds over n calls, and what the host recorded for the same series.</summary>
internal sealed record InvokeResult(BenchFunction Function, string Path, long SizeBytes, double P50Ms, double P99Ms, int N, HostSide? Host);
