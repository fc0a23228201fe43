using System.Buffers.Binary;
using System.Net.Http.Json;
using System.Text.Json.Nodes;
using FaaSCache.ScaleController;
using FaaSCache.ScaleController.Decisions;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;
using Microsoft.AspNetCore.Builder;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>memory-daemon</c>: the paper's Table 5 (§3.4, §6.4). <c>benchmarks/apps/memory</c> (Python, numpy) sums column 0 of
/// a 350 MB float64 array (8 columns, stored as 16 row blocks read through the cache), then <c>Allocate</c> grows its
/// worker until the app's function memory is 96% of the app's memory limit, then the sum runs again (timed). Every run
/// is an app under the scale controller (launch mode, 1 to 2 instances; compute and bandwidth votes off) and the
/// notebook talks to its first instance. An earlier session (sum, allocation, sum) comes first: its re-reads of blocks
/// the Memory Daemon evicted are the cache-size voter's signal. Modes: <c>no-daemon</c> (host.json
/// <c>memoryLimitBytes</c> 1 TiB: the daemon never acts on the app's real limit), <c>daemon</c>
/// (<c>memoryLimitBytes</c> = the limit, default 10% headroom, <c>scaling.cacheSize</c> off: the app stays at one
/// instance), <c>daemon-scale-out</c> (the same with <c>scaling.cacheSize</c> on: the vote makes the controller add the
/// second instance, which pre-warms the blocks it owns from the first instance's hand-off snapshot and keeps them in its own
/// memory). This machine enforces no memory limit
/// (cgroup v1), so <c>Allocate</c> charges the app as a cgroup v2 <c>memory.max</c> would (host and worker private RSS
/// plus the cache's tmpfs pages) and fails the step that would pass the limit: that is <c>allocation_ok</c>.
/// </summary>
internal static class MemoryDaemonBenchmark
{
    public const string CsvFileName = "memory-daemon.csv";
    public const string CsvHeader = "mode,second_sum_ms,allocation_ok,n";

    private const long MiB = 1L << 20;
    private const long LimitBytes = 2048 * MiB;
    private const long NoDaemonHostLimit = 1L << 40;
    private const int Parts = 16;
    private const int Columns = 8;
    private const long ArrayBytes = 350 * MiB;
    private const string Container = "memarray";
    private const string StorageNamespacePrefix = "fcmem";
    private const long StorageBytesPerSecond = 90_000_000;
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private static readonly string[] Modes = ["no-daemon", "daemon", "daemon-scale-out"];
    private static readonly JsonSerializerOptions StatusJson = new(JsonSerializerDefaults.Web);

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken cancellation = context.Cancellation;
        int n = context.Quick ? 1 : 3;
        context.WriteHeader("memory-daemon");
        output.WriteLine(string.Create(Invariant, $"350 MB array in {Parts} blocks, app memory limit {LimitBytes / MiB} MiB, allocation to 96% of it, {n} run(s) per mode; load average {MachineLoad.Average()}"));

        (AzuriteServer azurite, NetworkNamespace? storageLink) = await StartStorageAsync(output, cancellation);
        try
        {
            await RunModesAsync(context, azurite, n, cancellation);
        }
        finally
        {
            await azurite.DisposeAsync();
            if (storageLink is not null)
            {
                await storageLink.DisposeAsync();
            }
        }
    }

    // §6: "I/O bandwidth to remote storage (Azure Blob Storage) is lower at 90MB/s for large objects" than between
    // instances. Azurite on loopback would be as fast as a peer (and share the same two CPUs), hiding what the second
    // instance's memory is for; behind a 90 MB/s link of its own it is remote storage again, and peers stay on loopback.
    private static async Task<(AzuriteServer Azurite, NetworkNamespace? Link)> StartStorageAsync(TextWriter output, CancellationToken cancellation)
    {
        if (!NetworkNamespace.IsSupported(out string why))
        {
            output.WriteLine($"storage: Azurite on loopback (no network namespaces here: {why}); a peer is then no faster than storage");
            return (await AzuriteServer.StartAsync(cancellation), null);
        }

        await NetworkNamespace.CleanupAsync(StorageNamespacePrefix);
        NetworkNamespace link = await NetworkNamespace.CreateAsync(StorageNamespacePrefix, 0, new ShapedLinkOptions { RateBytesPerSecond = StorageBytesPerSecond }, cancellation);
        try
        {
            AzuriteServer azurite = await AzuriteServer.StartInNamespaceAsync(link.Name, link.InstanceAddress, cancellation);
            output.WriteLine($"storage: Azurite in network namespace {link} (the paper's 90 MB/s to blob storage); the instances and their peer traffic on loopback");
            return (azurite, link);
        }
        catch
        {
            await link.DisposeAsync();
            throw;
        }
    }

    private static async Task RunModesAsync(BenchmarkContext context, AzuriteServer azurite, int n, CancellationToken cancellation)
    {
        TextWriter output = context.Output;
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
        bool cacheSizeScaling = mode == "daemon-scale-out";
        using FunctionAppFolder app = BenchAppFolder.Copy("memory", json =>
        {
            BenchAppFolder.SetFaaSCache(json, "memoryLimitBytes", hostLimit);
            // Only the cache-size voter may scale (in its mode): compute and bandwidth votes would blur what it adds.
            BenchAppFolder.SetFaaSCache(json, "scaling", new JsonObject { ["compute"] = false, ["bandwidth"] = false, ["cacheSize"] = cacheSizeScaling });
        });
        using var shm = new TempShmDirectory("faascache-bench-mem");
        var options = new ScaleControllerOptions
        {
            ScriptRoot = app.Path,
            AppName = appName,
            StorageConnection = azurite.ConnectionString,
            HostDll = FaaSCacheHostProcess.FindHostDll(),
            Port = 0,
            GrpcPort = 0,
            SharedMemoryRoot = shm.Path,
            EnforceKeys = false,
            MinInstances = 1,
            MaxInstances = 2,
            PollInterval = TimeSpan.FromSeconds(1),
            // The notebook talks to its own instance, not through the front door: no idle scale-in during the run.
            ScaleInCooldown = TimeSpan.FromHours(1),
            IdleToZero = TimeSpan.FromHours(1),
        };
        WebApplication controller = ScaleControllerApp.Build(options, logging: l => l.ClearProviders());
        await controller.StartAsync(cancellation);
        try
        {
            InstancePool pool = controller.Services.GetRequiredService<InstancePool>();
            ManagedInstance first = (await WaitForReadyAsync(pool, 1, TimeSpan.FromMinutes(3), cancellation))[0];
            using var http = new HttpClient { BaseAddress = first.Process!.HttpEndpoint, Timeout = TimeSpan.FromMinutes(10) };

            // The notebook's earlier session: sum, heap growth, sum. The Memory Daemon's evictions and the re-reads of the
            // evicted blocks are the cache-size voter's signal; in its mode the controller's next poll scales out.
            await SumAsync(http, expected, cancellation);
            (bool earlierOk, _) = await AllocateAsync(http, cancellation);
            await SumAsync(http, expected, cancellation);
            int instances = await SettleAsync(pool, cacheSizeScaling ? 2 : 1, http, cancellation);

            // The measured session: the same three steps on the app as the votes left it.
            double firstSum = await SumAsync(http, expected, cancellation);
            CacheletCounters cached = (await StatusAsync(http, cancellation)).Count;
            (bool ok, string allocation) = await AllocateAsync(http, cancellation);
            HostStatus between = await StatusAsync(http, cancellation);
            double second = await SumAsync(http, expected, cancellation);
            CacheletCounters after = (await StatusAsync(http, cancellation)).Count;
            CacheletCounters before = between.Count;
            string decisions = string.Join("; ", controller.Services.GetRequiredService<DecisionHistory>().Snapshot()
                .Where(d => d.Changes).Select(d => string.Create(Invariant, $"{d.From}->{d.To} ({d.Reason})")));
            output.WriteLine(string.Create(Invariant,
                $"{mode}: {instances} instance(s) after the earlier session (earlier allocation {(earlierOk ? "ok" : "failed")}; scale decisions: {(decisions.Length > 0 ? decisions : "none")}); " +
                $"first sum {firstSum:0} ms ({cached.BytesCached / MiB} MiB cached here); allocation {(ok ? "ok" : "FAILED")} {allocation}; " +
                $"{DaemonReport(between.Memory)}; last snapshot {between.Prewarm?.LastSnapshot ?? "none"}; second sum {second:0} ms: local hits {after.LocalHits - before.LocalHits}, " +
                $"local misses {after.LocalMisses - before.LocalMisses}, remote hits {after.RemoteHits - before.RemoteHits}, remote misses {after.RemoteMisses - before.RemoteMisses}"));
            foreach (ManagedInstance other in pool.Ready().Where(i => i.Id != first.Id))
            {
                using var peer = new HttpClient { BaseAddress = other.Process!.HttpEndpoint, Timeout = TimeSpan.FromMinutes(1) };
                HostStatus status = await StatusAsync(peer, cancellation);
                CacheletCounters c = status.Count;
                output.WriteLine(string.Create(Invariant,
                    $"  {other.Id}: pre-warm {status.Prewarm?.State}: {status.Prewarm?.SnapshotsRead ?? 0} snapshot(s), {status.Prewarm?.Candidates ?? 0} candidate(s), loaded {status.Prewarm?.Loaded ?? 0} of {status.Prewarm?.Owned ?? 0} owned; {c.BytesCached / MiB} MiB cached, {c.Evictions} eviction(s), daemon evicted {status.Memory?.ObjectsEvicted ?? 0}, peer hits {c.PeerHits}, peer misses {c.PeerMisses}, local misses {c.LocalMisses}, memory evictions {c.MemoryEvictions}"));
            }

            return (second, ok);
        }
        finally
        {
            await controller.StopAsync(CancellationToken.None);
            await controller.DisposeAsync();
        }
    }

    // What the daemon did, and how soon after usage crossed its threshold (issue 36: it must make room in time).
    private static string DaemonReport(FaaSCache.Memory.MemoryDaemonStatus? m)
    {
        if (m is null)
        {
            return "no Memory Daemon status";
        }

        string all = string.Create(Invariant, $"daemon evicted {m.ObjectsEvicted} object(s), {m.BytesEvicted / MiB} MiB, and deleted {m.KeptBytesReleased / MiB} MiB of kept files in all");
        if (m.LastCrossing is not { } c)
        {
            return all + " (usage never crossed its threshold)";
        }

        string unseen = c.UnseenMs is { } u ? string.Create(Invariant, $"within {u:0} ms of the crossing (the sample before was below)") : "at its first sample";
        return all + string.Create(Invariant,
            $"; last crossing seen {unseen}, room made {c.ReactionMs:0} ms after: {c.Objects} object(s), {c.Bytes / MiB} MiB, kept files {c.KeptBytesReleased / MiB} MiB");
    }

    private static async Task<(bool Ok, string Json)> AllocateAsync(HttpClient http, CancellationToken cancellation)
    {
        using JsonDocument allocation = JsonDocument.Parse(await http.GetStringAsync(new Uri(string.Create(Invariant, $"api/allocate?limit={LimitBytes}&percent=96"), UriKind.Relative), cancellation));
        return (allocation.RootElement.GetProperty("ok").GetBoolean(), allocation.RootElement.GetRawText());
    }

    private static async Task<HostStatus> StatusAsync(HttpClient http, CancellationToken cancellation) =>
        await http.GetFromJsonAsync<HostStatus>(new Uri("admin/host/status", UriKind.Relative), StatusJson, cancellation)
        ?? throw new InvalidOperationException("/admin/host/status answered null.");

    private static async Task<IReadOnlyList<ManagedInstance>> WaitForReadyAsync(InstancePool pool, int count, TimeSpan limit, CancellationToken cancellation)
    {
        var clock = Stopwatch.StartNew();
        while (pool.Ready().Count < count)
        {
            if (clock.Elapsed > limit)
            {
                string states = string.Join(", ", pool.Snapshot().Select(i => $"{i.Id} {i.State} {i.Error}"));
                throw new TimeoutException(string.Create(Invariant, $"{count} ready instance(s) expected within {limit.TotalSeconds:0} s; the pool has: {(states.Length > 0 ? states : "none")}"));
            }

            await Task.Delay(200, cancellation);
        }

        return pool.Ready();
    }

    // With cache-size scaling the vote must bring the second instance, and the first must see it as a member (its ring
    // then sends about half the blocks to it); without, a few polls pass and the count must stay at one.
    private static async Task<int> SettleAsync(InstancePool pool, int expected, HttpClient first, CancellationToken cancellation)
    {
        if (expected == 1)
        {
            await Task.Delay(TimeSpan.FromSeconds(3), cancellation);
            int live = pool.LiveCount;
            return live == 1 ? live : throw new InvalidOperationException($"Without cache-size scaling the app scaled to {live} instances.");
        }

        await WaitForReadyAsync(pool, expected, TimeSpan.FromMinutes(3), cancellation);
        var clock = Stopwatch.StartNew();
        while ((await StatusAsync(first, cancellation)).MemberIds.Count < expected)
        {
            if (clock.Elapsed > TimeSpan.FromMinutes(1))
            {
                throw new TimeoutException($"The first instance did not see {expected} members within a minute.");
            }

            await Task.Delay(200, cancellation);
        }

        // The new instance's Load Daemon loads the blocks it owns from the snapshot the vote wrote; the notebook's next
        // step comes after it (bounded), as a user's next cell would a few seconds later.
        foreach (ManagedInstance added in pool.Ready().Where(i => i.Process!.HttpEndpoint != first.BaseAddress))
        {
            using var http = new HttpClient { BaseAddress = added.Process!.HttpEndpoint, Timeout = TimeSpan.FromMinutes(1) };
            while ((await StatusAsync(http, cancellation)).Prewarm is { State: "waiting" or "reading" or "loading" or "paused" })
            {
                if (clock.Elapsed > TimeSpan.FromMinutes(2))
                {
                    throw new TimeoutException($"{added.Id}'s Load Daemon did not finish within two minutes.");
                }

                await Task.Delay(200, cancellation);
            }
        }

        return expected;
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
