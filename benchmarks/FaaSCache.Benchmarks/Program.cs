using System.CommandLine;
using System.Runtime.InteropServices;
using FaaSCache.Storage;
using FaaSCache.Testing;

namespace FaaSCache.Benchmarks;

/// <summary>
/// Entry point of every FaaSCache benchmark: <c>FaaSCache.Benchmarks &lt;name&gt; [--quick]</c>
/// (normally through <c>benchmarks/run</c>). A new benchmark is one more line in <see cref="Benchmarks"/>.
/// </summary>
internal static class Program
{
    private const int Failed = 1;
    private const int UsageError = 2;
    private const int InterruptedExitCode = 130;

    private static readonly BenchmarkDefinition[] Benchmarks =
    [
        new("cachelet-read", "cachelet local hit / local miss read latency vs Azurite, Redis and MemoryCache, 1 KB .. 128 MB", CacheletReadBenchmark.RunAsync),
        new("invoke", "end-to-end HTTP invocation latency, vanilla vs local miss vs local hit, Python and Node, 1 KB .. 128 MB", InvokeBenchmark.RunAsync),
        new(Fig9Benchmark.Name, "the paper's Fig. 9: the AMBER Alert pipeline end to end, vanilla vs local hit vs remote hit (add --storage-distance 10ms for storage at a distance)", Fig9Benchmark.RunAsync),
        new("invoke-breakdown", "where a local hit's time goes (client, host, worker, Node GC) at 1 KB, 16 MB and 128 MB, workers' timing hooks on", InvokeBreakdownBenchmark.RunAsync),
        new("consistency", "the paper's Table 6: 5 host instances count a blob to 1,000 round-robin under each of the six consistency presets", ConsistencyBenchmark.RunAsync),
        new("compute-scaling", "a bounded HTTP load ramp through the scale controller's front door: instances, p50/p99 latency and failures over time, with a PNG", ComputeScalingBenchmark.RunAsync),
        new("remote-read", "remote hit / remote miss from an owner process vs a direct Azurite download and raw TCP, 1 KB .. 128 MB", RemoteReadBenchmark.RunAsync),
        new("prewarm", "the paper's §3.3 AMBER Alert after an unload: cold start vs hybrid histogram alone vs FaaSCache pre-warm (first invocation of the pipeline)", PrewarmBenchmark.RunAsync),
        new("memory-daemon", "the paper's Table 5: a 350 MB numpy column sum, a heap growth to 96% of the app's memory limit, the sum again: no daemon / daemon / daemon + a second instance", MemoryDaemonBenchmark.RunAsync),
        new("bandwidth-scaling", "the paper's Fig. 12: a fresh miss of 400 KB .. 800 MB over 90 MB/s per-instance links, one instance vs bandwidth scaling over 6 (planner's N and every fixed N)", BandwidthScalingBenchmark.RunAsync),
        new("simulate", "the paper's Fig. 8: the Azure-shaped 44.3 M-access trace (--quick: 1 M) through the cachelet's policy code, 32 MB .. 1 GB, pre-warm off/on; CSV, CDF PNG, throughput and peak memory", SimulateBenchmark.RunAsync),
        new(Fig12ReplayBenchmark.Name, "the paper's Fig. 12 from a replay of the cachelet's scaled load over the paper's links (90 MB/s storage, 750 MB/s between instances) with the measured T_Load: 400 KB .. 800 MB, N = 1 .. 6, running and cold helpers, the planner's N; CSV", Fig12ReplayBenchmark.RunAsync),
        new(SdkReadBenchmark.Name, "an unmodified storage SDK (.NET, Node, Python) downloading a blob straight from Azurite vs through the SDK endpoint (hit, miss), and a binding's hit, 1 KB .. 128 MB", SdkReadBenchmark.RunAsync),
        new(ResultsBenchmark.Name, "Rosa et al.'s result caching on the thumbnail sample (declared in host.json): no_cache vs a hit from local, cluster (a remote owner) and redis at 18 KB, 229 KB and 4 MB, and 750 requests from 5 threads per location; results.csv, results-load.csv", ResultsBenchmark.RunAsync),
        new("reliability", "faults with real processes, per-preset histories checked for linearizability, a bounded soak; CSV of lost writes, stale and partial reads, leaks", ReliabilityBenchmark.RunAsync),
    ];

    public static async Task<int> Main(string[] args)
    {
        if (args is [DotnetSdkReader.CommandName, ..])
        {
            // sdk-read's .NET reader, a child process of the benchmark (not a benchmark of its own).
            return await DotnetSdkReader.RunAsync(args[1..]);
        }

        var root = new RootCommand("FaaSCache benchmarks (normally run through benchmarks/run <name> [--quick], which builds in Release and checks prerequisites).");
        foreach (BenchmarkDefinition definition in Benchmarks)
        {
            var quickOption = new Option<bool>("--quick") { Description = "Fewer iterations: a smoke run of a few minutes; percentiles are less stable." };
            var distanceOption = new Option<string?>("--storage-distance")
            {
                Description = "Put Azurite at a distance: the first byte of a small read takes this long (e.g. 10ms), through a user-space link that also caps each connection at --storage-rate; 0 or absent: loopback.",
            };
            var rateOption = new Option<double>("--storage-rate") { Description = "MB/s per connection of the storage link (with --storage-distance).", DefaultValueFactory = _ => 90 };
            var podsOption = new Option<bool>("--pods") { Description = "remote-read: add rows between two host pods on podman (scripts/pods.sh), beside the loopback rows." };
            var command = new Command(definition.Name, definition.Description) { quickOption, distanceOption, rateOption, podsOption };
            command.SetAction((result, _) => RunAsync(definition, result.GetValue(quickOption), StorageDistance.Parse(result.GetValue(distanceOption)), result.GetValue(rateOption), result.GetValue(podsOption)));
            root.Subcommands.Add(command);
        }

        root.Subcommands.Add(ProfilePathCommand());

        if (args.Length == 0)
        {
            await root.Parse("--help").InvokeAsync();
            return UsageError;
        }

        ParseResult parsed = root.Parse(args);
        int code = await parsed.InvokeAsync();
        return parsed.Errors.Count > 0 ? UsageError : code;
    }

    /// <summary>profile-path: the target benchmarks/profile runs under dotnet-trace and perf (not a benchmark of its own).</summary>
    private static Command ProfilePathCommand()
    {
        var paths = new Option<string>("--path") { Description = "cachelet-read path(s), comma separated: lm, storage_direct, lh_strong, redis, ...", Required = true };
        var size = new Option<string>("--size") { Description = "object size: 1KB .. 128MB", DefaultValueFactory = _ => "128MB" };
        var seconds = new Option<int>("--seconds") { Description = "how long to measure after a 1 s warm-up", DefaultValueFactory = _ => 20 };
        var pause = new Option<int>("--pause-ms") { Description = "untimed pause after each round (e.g. 3000: paths spaced out as in the full cachelet-read run)", DefaultValueFactory = _ => 0 };
        var command = new Command(ProfilePath.Name, "one or two cachelet-read paths at one size for a fixed time, for a profiler (see benchmarks/profile)") { paths, size, seconds, pause };
        command.SetAction((result, _) =>
        {
            string[] names = result.GetValue(paths)!.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
            long bytes = ProfilePath.ParseSize(result.GetValue(size)!);
            var duration = TimeSpan.FromSeconds(Math.Max(1, result.GetValue(seconds)));
            return RunAsync(new BenchmarkDefinition(ProfilePath.Name, command.Description!, c => ProfilePath.RunAsync(c, names, bytes, duration, TimeSpan.FromMilliseconds(Math.Max(0, result.GetValue(pause))))), quick: false);
        });
        return command;
    }

    private static async Task<int> RunAsync(BenchmarkDefinition definition, bool quick, TimeSpan storageDistance = default, double storageRateMBps = 90, bool pods = false)
    {
        string name = definition.Name;
        // The first Ctrl+C / SIGTERM stops the benchmark gracefully (servers stopped, files removed);
        // a second one ends the process at once (the fixtures' exit hooks still kill the servers).
        using var stop = new CancellationTokenSource();
        using PosixSignalRegistration sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => RequestStop(c, stop));
        using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => RequestStop(c, stop));

        var context = new BenchmarkContext(
            quick,
            Path.Combine(RepositoryRoot.Find(), "benchmarks", "results"),
            Console.Out,
            stop.Token)
        {
            StorageDistance = storageDistance,
            StorageRateBytesPerSecond = storageRateMBps * 1e6,
            Pods = pods,
        };
        try
        {
            await definition.Run(context);
            return 0;
        }
        catch (Exception e) when (Interrupted(stop, e))
        {
            await Console.Error.WriteLineAsync("Interrupted: servers stopped and temporary files removed.");
            return InterruptedExitCode;
        }
        catch (Exception e)
        {
            // The benchmark's own `await using` blocks have stopped its servers by now.
            await Console.Error.WriteLineAsync($"{name} failed: {e}");
            return Failed;
        }
    }

    /// <summary>
    /// True when the run was stopped by Ctrl+C / SIGTERM. A terminal's Ctrl+C also reaches Azurite and
    /// redis-server (same process group), so a request may fail with "connection refused" a moment before
    /// our own handler runs: give the signal a second to arrive before calling it a real failure.
    /// </summary>
    private static bool Interrupted(CancellationTokenSource stop, Exception e) =>
        stop.IsCancellationRequested ||
        (e is not OperationCanceledException && stop.Token.WaitHandle.WaitOne(TimeSpan.FromSeconds(1)));

    private static void RequestStop(PosixSignalContext signal, CancellationTokenSource stop)
    {
        if (stop.IsCancellationRequested)
        {
            return;
        }

        signal.Cancel = true;
        Console.Error.WriteLine($"{signal.Signal}: stopping (again to kill at once)...");
        stop.Cancel();
    }
}

/// <summary>One benchmark the entry point can run.</summary>
internal sealed record BenchmarkDefinition(string Name, string Description, Func<BenchmarkContext, Task> Run);

/// <summary>What every benchmark gets: mode, where results go, output, and the Ctrl+C token.</summary>
internal sealed record BenchmarkContext(bool Quick, string ResultsDirectory, TextWriter Output, CancellationToken Cancellation)
{
    /// <summary>The first lines of every benchmark: its name and mode, and the .NET runtime it measures with.</summary>
    public void WriteHeader(string name, string runtimePrefix = "")
    {
        Output.WriteLine($"== {name} ({(Quick ? "quick" : "full")} mode) ==");
        Output.WriteLine(
            $"{runtimePrefix}.NET {Environment.Version}, {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")} GC, " +
            $"Stopwatch {System.Diagnostics.Stopwatch.Frequency:N0} ticks/s, {Environment.ProcessorCount} CPUs");
    }

    /// <summary>Gets how far storage is (the first byte of a small read), or zero for Azurite on loopback.</summary>
    public TimeSpan StorageDistance { get; init; }

    /// <summary>Gets a value indicating whether remote-read adds the rows between two host pods (<c>--pods</c>).</summary>
    public bool Pods { get; init; }

    /// <summary>Gets the storage link's rate per connection, with <see cref="StorageDistance"/>.</summary>
    public double StorageRateBytesPerSecond { get; init; } = 90e6;

    /// <summary>Gets the storage distance in milliseconds, as the CSVs' <c>storage_latency_ms</c> column has it (0: loopback).</summary>
    public double StorageLatencyMs => StorageDistance.TotalMilliseconds;

    /// <summary>A results file name: the benchmark's own on loopback, with the distance in it otherwise (the loopback results stay).</summary>
    public string ResultsFile(string name) => StorageDistance == TimeSpan.Zero
        ? name
        : $"{Path.GetFileNameWithoutExtension(name)}-storage-{StorageLatencyMs:0.##}ms{Path.GetExtension(name)}";

    /// <summary>
    /// Starts the benchmark's own Azurite and says where it runs. With <see cref="StorageDistance"/>, clients reach it
    /// through a <see cref="FaaSCache.NetworkEmulation.DelayLink"/> whose round trip makes up the difference between
    /// Azurite's own first-byte time (probed) and the distance, at <see cref="StorageRateBytesPerSecond"/> per connection;
    /// then a probe through the link prints what storage now costs.
    /// </summary>
    public async Task<AzuriteServer> StartAzuriteAsync()
    {
        AzuriteServer azurite = await AzuriteServer.StartAsync(Cancellation);
        Output.WriteLine($"azurite {AzuriteServer.InstalledVersion()}: {azurite.BlobEndpoint} (pid {azurite.ProcessId}, data in {azurite.DataDirectory})");
        if (StorageDistance > TimeSpan.Zero)
        {
            StorageProfile local = await StorageProbe.ProbeAsync(azurite.CreateServiceClient(), "azurite on loopback", rounds: 20, largeBytes: 8L << 20, cancellationToken: Cancellation);
            TimeSpan added = StorageDistance - TimeSpan.FromMilliseconds(local.FirstByteMs);
            var link = FaaSCache.NetworkEmulation.DelayLink.Start(
                new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, azurite.Port), added > TimeSpan.Zero ? added : TimeSpan.Zero, (long)StorageRateBytesPerSecond);
            azurite.RouteThrough(link.Endpoint, link);
            // Timers overshoot: tune the link until a probe through it reads the distance (within 0.5 ms, at most 4 tries).
            StorageProfile far = await StorageProbe.ProbeAsync(azurite.CreateServiceClient(), $"azurite {StorageLatencyMs:0.##} ms away", rounds: 40, largeBytes: 32L << 20, cancellationToken: Cancellation);
            for (int attempt = 0; attempt < 4 && Math.Abs(far.FirstByteMs - StorageLatencyMs) > 0.5; attempt++)
            {
                TimeSpan tuned = link.RoundTrip + TimeSpan.FromMilliseconds(StorageLatencyMs - far.FirstByteMs);
                link.Retune(tuned > TimeSpan.Zero ? tuned : TimeSpan.Zero);
                Output.WriteLine($"  link tuned to {link.RoundTrip.TotalMilliseconds:0.00} ms round trip (a probe read {far.FirstByteMs:0.00} ms)");
                far = await StorageProbe.ProbeAsync(azurite.CreateServiceClient(), $"azurite {StorageLatencyMs:0.##} ms away", rounds: 40, largeBytes: 32L << 20, cancellationToken: Cancellation);
            }

            Output.WriteLine($"storage at a distance: {local}; through a link at {link.Endpoint} of {link.RoundTrip.TotalMilliseconds:0.00} ms round trip (set) and {StorageRateBytesPerSecond / 1e6:0} MB/s per connection");
            Output.WriteLine($"  probed through the link: {far}");
        }

        return azurite;
    }
}

/// <summary>Parses <c>--storage-distance</c>: <c>10ms</c>, <c>0.01s</c>, a bare number of milliseconds, or <c>0</c>.</summary>
internal static class StorageDistance
{
    public static TimeSpan Parse(string? text)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return TimeSpan.Zero;
        }

        string t = text.Trim().ToLowerInvariant();
        double scale = t.EndsWith("ms", StringComparison.Ordinal) ? 1 : t.EndsWith('s') ? 1000 : 1;
        string number = t.EndsWith("ms", StringComparison.Ordinal) ? t[..^2] : t.EndsWith('s') ? t[..^1] : t;
        if (!double.TryParse(number, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture, out double value) || value < 0 || value * scale > 5000)
        {
            throw new ArgumentException($"--storage-distance '{text}' is not a distance: write it as 10ms (0 to 5000 ms), or 0 for loopback.");
        }

        return TimeSpan.FromMilliseconds(value * scale);
    }
}
