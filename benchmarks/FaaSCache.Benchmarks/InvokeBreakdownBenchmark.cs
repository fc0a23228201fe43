namespace FaaSCache.Benchmarks;

/// <summary>
/// invoke-breakdown: where a local hit's time goes, at 1 KB, 16 MB and 128 MB. The same bench apps and client as
/// <c>invoke</c>, cache-on hosts only, with the workers' own timing switched on by the hooks in
/// <c>benchmarks/diagnostics/</c> (loaded through the workers' environment: the workers' code is not
/// changed). Joins, per invocation, the host's record (<c>durationMs</c>) with the worker's own clock (request
/// in to response out, and how long binding the input took), and for Node the V8 garbage collections that ran
/// inside each invocation. The hooks cost a little (a log line per invocation), which is why <c>invoke</c>
/// itself runs without them.
/// </summary>
internal static partial class InvokeBreakdownBenchmark
{
    public const string Name = "invoke-breakdown";

    public static readonly long[] Sizes = [1L << 10, 16L << 20, 128L << 20];

    private const int Seed = 20211105;

    private static readonly TimeSpan FirstWarmup = TimeSpan.FromSeconds(20);

    private static readonly string[] MeasuredPaths = [InvokeRig.LocalHit, InvokeRig.NoInput];

    public static async Task RunAsync(BenchmarkContext context)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        var total = Stopwatch.StartNew();
        int iterations = context.Quick ? 30 : 150;
        context.WriteHeader(Name);
        string diagnostics = Path.Combine(RepositoryRoot.Find(), "benchmarks", "diagnostics");
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        await using InvokeRig rig = await InvokeRig.CreateAsync(
            azurite,
            vanilla: false,
            environment: language => language == "python"
                ? new Dictionary<string, string> { ["PYTHONPATH"] = Path.Combine(diagnostics, "python") }
                : new Dictionary<string, string> { ["NODE_OPTIONS"] = $"--require {Path.Combine(diagnostics, "node", "invocation-timing.js")}" },
            languages: ["python", "node"],
            cancellationToken: ct);
        foreach (BenchHost host in rig.Hosts)
        {
            string hook = host.Process.Output.Contains("FAASCACHE-DIAG hook installed", StringComparison.Ordinal) ? "hook installed" : "hook NOT installed yet";
            output.WriteLine($"  {host.Label,-22} pid {host.Process.ProcessId}, {host.Process.BaseUri} ({hook})");
        }

        output.WriteLine($"  node worker's shared-memory inputs: {rig.NodeSharedMemoryMode()}");
        output.WriteLine($"load average before measuring: {MachineLoad.Average()}");

        var rows = new List<BreakdownRow>();
        for (int i = 0; i < Sizes.Length; i++)
        {
            long size = Sizes[i];
            var sizeClock = Stopwatch.StartNew();
            await output.ShowAsync($"{ReportFormat.SizeLabel(size),7}: uploading, warming up...", ct);
            InputBlob input = await rig.UploadAsync(size, Seed + i, ct);
            IReadOnlyList<InvokeSeries> all = rig.Series(input, [InvokeRig.LocalMiss, .. MeasuredPaths]);
            Dictionary<string, CacheletCounters> before = await rig.CountersAsync(ct);
            await InvokeRig.CacheInputAsync(all, ct);

            var series = all.Where(s => MeasuredPaths.Contains(s.Path)).ToList();
            await Interleaved.WarmUpAsync(series, _ => Math.Max(1, iterations / 10), i == 0 ? FirstWarmup : TimeSpan.Zero, ct);
            await output.ShowAsync(" measuring...", ct);
            var samples = series.ToDictionary(s => s.Name, _ => new LatencySamples(iterations));
            DateTimeOffset measuring = DateTimeOffset.UtcNow;
            await Interleaved.RunAsync(series, _ => iterations, samples, ct);
            InvokeBenchmark.CheckCounters(all, before, await rig.CountersAsync(ct));

            foreach (InvokeSeries s in series)
            {
                rows.Add(await BreakdownAsync(s, samples[s.Name], measuring, ct));
            }

            output.WriteLine($" done in {sizeClock.Elapsed.TotalSeconds:0.0} s (load average {MachineLoad.Average()})");
        }

        output.WriteLine();
        Print(output, rows, context.Quick);
        output.WriteLine();
        output.WriteLine("stopping the hosts (SIGTERM)...");
        foreach (string line in await rig.StopHostsAsync())
        {
            output.WriteLine($"  {line}");
        }

        output.WriteLine($"total {total.Elapsed.TotalSeconds:0} s; load average {MachineLoad.Average()}");
    }

    /// <summary>Joins the host's records of one series with its worker's timing lines, by invocation id.</summary>
    private static async Task<BreakdownRow> BreakdownAsync(InvokeSeries series, LatencySamples client, DateTimeOffset since, CancellationToken cancellationToken)
    {
        List<InvocationRecord> records = (await series.Host.Process.GetInvocationsAsync(series.Function.Name, cancellationToken))
            .Where(r => r.Status == "succeeded" && r.StartedAt >= since)
            .ToList();
        string log = series.Host.Process.Output;
        var worker = new Dictionary<string, WorkerTiming>(StringComparer.Ordinal);
        foreach (Match m in InvocationLine().Matches(log))
        {
            worker[m.Groups["id"].Value] = new WorkerTiming(
                Number(m.Groups["total"]),
                Number(m.Groups["prepare"]),
                m.Groups["start"].Success ? Number(m.Groups["start"]) : null,
                m.Groups["end"].Success ? Number(m.Groups["end"]) : null);
        }

        var collections = GcLine().Matches(log)
            .Select(m => (Major: m.Groups["kind"].Value == "major", Start: Number(m.Groups["start"]), Duration: Number(m.Groups["duration"])))
            .ToList();

        var joined = records.Where(r => worker.ContainsKey(r.InvocationId)).Select(r => (Record: r, Worker: worker[r.InvocationId])).ToList();
        if (joined.Count == 0)
        {
            throw new InvalidOperationException(
                $"{series.Name}: none of the host's {records.Count} records has a FAASCACHE-DIAG line from the worker (is the hook in benchmarks/diagnostics/ loaded?).");
        }

        // A GC belongs to the invocation that last started before it on that worker: the window runs from this
        // invocation's start to the worker's next one (any function), so a collection set off by this invocation's
        // Buffer but run after its response was queued (as V8 schedules them) still counts here.
        double? gcPerInvocation = null;
        double? gcMsPerInvocation = null;
        if (joined.All(j => j.Worker.Start is not null))
        {
            double[] starts = [.. worker.Values.Select(w => w.Start!.Value).Order()];
            var gcs = joined.Select(j =>
            {
                int next = Array.BinarySearch(starts, j.Worker.Start!.Value);
                double until = next >= 0 && next + 1 < starts.Length ? starts[next + 1] : double.MaxValue;
                return collections.Where(g => g.Start >= j.Worker.Start && g.Start < until).ToList();
            }).ToList();
            gcPerInvocation = gcs.Average(g => g.Count(x => x.Major));
            gcMsPerInvocation = gcs.Average(g => g.Sum(x => x.Duration));
        }

        return new BreakdownRow(
            series.Function,
            series.Path,
            series.Input.Size,
            client.Count,
            client.PercentileMilliseconds(50),
            LatencySamples.NearestRank(records.Select(r => r.DurationMs).ToList(), 50),
            LatencySamples.NearestRank(joined.Select(j => j.Worker.TotalMs).ToList(), 50),
            LatencySamples.NearestRank(joined.Select(j => j.Record.DurationMs - j.Worker.TotalMs).ToList(), 50),
            LatencySamples.NearestRank(joined.Select(j => j.Worker.PrepareMs).ToList(), 50),
            joined.Count,
            gcPerInvocation,
            gcMsPerInvocation);
    }

    private static void Print(TextWriter output, IReadOnlyList<BreakdownRow> rows, bool quick)
    {
        output.WriteLine($"Where a local hit's time goes, milliseconds (p50; {(quick ? "quick" : "full")} mode; cache-on hosts, workers' timing hooks on)");
        output.WriteLine("client: Stopwatch around the HTTP GET; host: the invocation's durationMs; worker: InvocationRequest in -> InvocationResponse out");
        output.WriteLine("on the worker's clock; host - worker: per invocation (cache read incl. the strong ETag check, gRPC both ways, the host's own");
        output.WriteLine("work); binding: the worker's binding of the input (open + map + wrap); major GCs: V8 mark-compacts from the invocation's");
        output.WriteLine("start to the worker's next invocation; GC ms: the pauses of all V8 collections in that window (Node only).");
        output.WriteLine();
        output.WriteLine("| language | function | size | path | n | client | host | client - host | worker | host - worker | binding | major GCs / inv. | GC ms / inv. |");
        output.WriteLine("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (BreakdownRow r in rows.OrderBy(r => r.Function.Language == "python" ? 0 : 1).ThenBy(r => r.Function.Name).ThenBy(r => r.SizeBytes))
        {
            output.WriteLine(
                $"| {r.Function.Language} | {r.Function.Name} | {ReportFormat.SizeLabel(r.SizeBytes)} | {r.Path} | {ReportFormat.Count(r.N)} " +
                $"| {ReportFormat.Latency(r.ClientP50)} | {ReportFormat.Latency(r.HostP50)} | {ReportFormat.Latency(r.ClientP50 - r.HostP50)} " +
                $"| {ReportFormat.Latency(r.WorkerP50)} | {ReportFormat.Latency(r.HostMinusWorkerP50)} | {ReportFormat.Latency(r.BindingP50)} " +
                $"| {(r.MajorGcsPerInvocation is { } g ? g.ToString("0.00", CultureInfo.InvariantCulture) : "-")} " +
                $"| {(r.GcMsPerInvocation is { } ms ? ReportFormat.Latency(ms) : "-")} |");
        }
    }

    private static double Number(Group group) => double.Parse(group.Value, CultureInfo.InvariantCulture);

    [GeneratedRegex(@"FAASCACHE-DIAG invocation (?<id>[0-9a-fA-F-]{36})(?: start=(?<start>[0-9.]+) end=(?<end>[0-9.]+))? total_ms=(?<total>[0-9.]+) prepare_ms=(?<prepare>[0-9.]+)")]
    private static partial Regex InvocationLine();

    [GeneratedRegex(@"FAASCACHE-DIAG gc (?<kind>\w+) start=(?<start>[0-9.]+) duration_ms=(?<duration>[0-9.]+)")]
    private static partial Regex GcLine();
}

/// <summary>One invocation as the worker's hook timed it (start/end only from the Node hook, on the worker's performance.now()).</summary>
internal sealed record WorkerTiming(double TotalMs, double PrepareMs, double? Start, double? End);

/// <summary>One row of invoke-breakdown: p50s in milliseconds, and for Node the major GCs inside the invocations.</summary>
internal sealed record BreakdownRow(
    BenchFunction Function,
    string Path,
    long SizeBytes,
    int N,
    double ClientP50,
    double HostP50,
    double WorkerP50,
    double HostMinusWorkerP50,
    double BindingP50,
    int Joined,
    double? MajorGcsPerInvocation,
    double? GcMsPerInvocation);
