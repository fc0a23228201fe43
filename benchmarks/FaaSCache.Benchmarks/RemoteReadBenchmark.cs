using Azure.Storage.Blobs.Models;
using StackExchange.Redis;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>remote-read</c>: how long a cachelet takes to get an object it does not hold from the object's owner, another
/// process: remote hit (<c>rh</c>: the owner has it in memory) and remote miss (<c>rm</c>: the owner fetches it from
/// storage first, streaming it on as it arrives), next to a plain download from Azurite (<c>storage_direct</c>) and the
/// same bytes over one raw TCP connection between two processes (<c>tcp_raw</c>, the floor), for 1 KB .. 128 MB. Once on
/// loopback and once with the owner and the TCP sender in a network namespace behind a 1 Gbit/s tc-shaped link (the
/// <c>_shaped</c> rows), where the network rather than the CPU is the limit; and a Redis GET of the same bytes from a
/// redis-server on loopback (<c>redis_get</c>), the floor of a small remote hit. See <see cref="RemoteReadRig"/>.
/// </summary>
internal static class RemoteReadBenchmark
{
    public const string CsvFileName = "remote-read.csv";
    public const string CsvHeader = "path,size_bytes,p50_us,p99_us,n";

    public static readonly string[] PathNames = ["rh", "rm", "storage_direct", "tcp_raw", "redis_get", "rh_shaped", "rm_shaped", "tcp_raw_shaped", "rh_pods", "rm_pods"];

    private const string ContainerName = "remote-read";
    private const string NamespacePrefix = "rrbench";
    private const long ShapedRate = 125_000_000; // 1 Gbit/s
    private const long ThroughputFrom = 1L << 20;
    private const long TcpAimFrom = 16L << 20;
    private const double TcpAim = 0.5;
    private const long RedisAimUpTo = 1L << 10;
    private const double RedisAim = 2.0;
    private static readonly long[] Sizes = [1L << 10, 1L << 20, 16L << 20, 128L << 20];
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private static int _sink;

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken cancellation = context.Cancellation;
        var wall = Stopwatch.StartNew();
        output.WriteLine($"remote-read ({(context.Quick ? "quick" : "full")} mode); load average {MachineLoad.Average()}");
        output.WriteLine("links: loopback on one machine (owner, reader, Azurite and the TCP sender are processes on this machine)");
        bool shaped = NetworkNamespace.IsSupported(out string whyNot);
        output.WriteLine(shaped
            ? $"       and a shaped link: a second owner and TCP sender in network namespace {NamespacePrefix}-<n>, veth to the root namespace, tc tbf {ShapedRate / 1_000_000} MB/s each way (no netem in this kernel: no added delay)"
            : $"       no shaped link rows: {whyNot}");

        if (shaped)
        {
            await NetworkNamespace.CleanupAsync(NamespacePrefix);
        }

        await using AzuriteServer azurite = await AzuriteServer.StartAsync(shaped ? "0.0.0.0" : "127.0.0.1", cancellation);
        BlobContainerClient container = new BlobServiceClient(azurite.ConnectionString, AzureBlobStore.CreateClientOptions()).GetBlobContainerClient(ContainerName);
        await container.CreateIfNotExistsAsync(cancellationToken: cancellation);
        await using RedisServer redisServer = await RedisServer.StartAsync(cancellation);
        var redisOptions = ConfigurationOptions.Parse(redisServer.Endpoint);
        redisOptions.AbortOnConnectFail = true;
        // A 128 MB GET takes a good fraction of a second here; the 5 s defaults are too tight under load.
        redisOptions.SyncTimeout = 120_000;
        redisOptions.AsyncTimeout = 120_000;
        await using ConnectionMultiplexer redis = await ConnectionMultiplexer.ConnectAsync(redisOptions);
        output.WriteLine($"redis_get: redis-server pid {redisServer.ProcessId.ToString(Invariant)} on {redisServer.Endpoint} (no persistence), StackExchange.Redis StringGetAsync as byte[]");
        using FunctionAppFolder app = BenchAppFolder.Copy("counter", json => BenchAppFolder.SetFaaSCache(json, "consistency", "owner"));
        var rigs = new List<RemoteReadRig>();
        PodsRemoteReadRig? pods = null;
        using FunctionAppFolder? podsApp = context.Pods ? BenchAppFolder.Copy("counter", json => BenchAppFolder.SetFaaSCache(json, "consistency", "owner"), "rr-pods") : null;
        try
        {
            if (podsApp is not null)
            {
                pods = await PodsRemoteReadRig.StartAsync(podsApp.Path, ContainerName, output, cancellation);
            }

            rigs.Add(await RemoteReadRig.StartAsync(azurite, app.Path, string.Empty, null, Sizes.Max(), output, cancellation));
            if (shaped)
            {
                NetworkNamespace network = await NetworkNamespace.CreateAsync(NamespacePrefix, 1, new ShapedLinkOptions { RateBytesPerSecond = ShapedRate }, cancellation);
                rigs.Add(await RemoteReadRig.StartAsync(azurite, app.Path, "_shaped", network, Sizes.Max(), output, cancellation));
            }

            output.WriteLine(
                $"iterations per path: {string.Join(", ", Sizes.Select(s => $"{ReportFormat.SizeLabel(s)} {Iterations(s, context.Quick).ToString(Invariant)}"))}" +
                $"{(context.Quick ? " (quick: a fifth of the full run's)" : string.Empty)}");
            output.WriteLine();
            List<RemoteReadResult> results = await MeasureAsync(context, container, redis.GetDatabase(), rigs, pods);
            output.WriteLine($"reader counters (loopback): {JsonSerializer.Serialize(rigs[0].Reader.Metrics.Snapshot())}");
            output.WriteLine();
            Print(output, results, context.Quick);
            string csv = WriteCsv(context.ResultsDirectory, results);
            output.WriteLine();
            output.WriteLine($"wrote {csv}");
            foreach (RemoteReadRig rig in rigs)
            {
                output.WriteLine($"owner{rig.Suffix} stopped: {string.Join("; ", await rig.StopAsync())}");
            }
        }
        finally
        {
            foreach (RemoteReadRig rig in rigs)
            {
                await rig.DisposeAsync();
            }

            if (pods is not null)
            {
                await pods.DisposeAsync();
            }
        }

        output.WriteLine($"wall time {wall.Elapsed.TotalSeconds:0} s; load average at the end {MachineLoad.Average()}");
    }

    private static async Task<List<RemoteReadResult>> MeasureAsync(BenchmarkContext context, BlobContainerClient container, IDatabase redis, List<RemoteReadRig> rigs, PodsRemoteReadRig? pods)
    {
        CancellationToken cancellation = context.Cancellation;
        var results = new List<RemoteReadResult>();
        bool warm = false;
        foreach (long size in Sizes)
        {
            cancellation.ThrowIfCancellationRequested();
            var data = new byte[size];
            new Random(unchecked((int)size)).NextBytes(data);
            string blobName = string.Create(Invariant, $"object-{size}");
            string key = $"{ContainerName}/{blobName}";
            BlobClient blob = container.GetBlobClient(blobName);
            await blob.UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellation);
            await redis.StringSetAsync(key, data);
            if (pods is not null)
            {
                await pods.Container.GetBlobClient(blobName).UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellation);
            }

            data = null;
            byte[] buffer = new byte[size];
            buffer.AsSpan().Fill(1); // touched before it is measured, as the floor should be

            // Every placement's paths interleaved in one loop: the ratios compare reads made side by side.
            var paths = new List<ITimedPath>();
            foreach (RemoteReadRig rig in rigs)
            {
                paths.AddRange(rig.Paths(key, size, buffer));
                await rig.FillOwnerAsync(key, size, cancellation);
            }

            if (pods is not null)
            {
                await pods.FillOwnerAsync(key, size, cancellation);
                paths.AddRange(pods.Paths(key, size));
            }

            paths.Insert(2, new RemoteReadRig.RemotePath("storage_direct", async ct =>
            {
                long t0 = Stopwatch.GetTimestamp();
                using (BlobDownloadStreamingResult download = (await blob.DownloadStreamingAsync(cancellationToken: ct)).Value)
                {
                    await download.Content.ReadExactlyAsync(buffer, ct);
                }

                _sink += buffer[0] + buffer[^1];
                return Stopwatch.GetTimestamp() - t0;
            }));

            paths.Insert(4, new RemoteReadRig.RemotePath("redis_get", async ct =>
            {
                long t0 = Stopwatch.GetTimestamp();
                byte[] value = (byte[]?)await redis.StringGetAsync(key) ?? throw new InvalidOperationException($"redis has no '{key}'.");
                _sink += value[0] + value[^1];
                long ticks = Stopwatch.GetTimestamp() - t0;
                return value.LongLength == size ? ticks : throw new InvalidOperationException($"redis returned {value.LongLength} bytes of {key}, not {size}.");
            }));

            if (!warm)
            {
                // Tier-1 code and warm connections on both sides before anything is recorded, as in a long-running host.
                TimeSpan warmup = TimeSpan.FromSeconds(context.Quick ? 2 : 5);
                var clock = Stopwatch.StartNew();
                while (clock.Elapsed < warmup)
                {
                    await Interleaved.RunAsync(paths, _ => 1, null, cancellation);
                }

                warm = true;
            }
            else
            {
                await Interleaved.RunAsync(paths, _ => 2, null, cancellation);
            }

            int n = Iterations(size, context.Quick);
            var samples = paths.ToDictionary(p => p.Name, _ => new LatencySamples(n), StringComparer.Ordinal);
            var sizeClock = Stopwatch.StartNew();
            await Interleaved.RunAsync(paths, _ => n, samples, cancellation);
            foreach (ITimedPath p in paths)
            {
                LatencySamples s = samples[p.Name];
                results.Add(new RemoteReadResult(p.Name, size, s.PercentileMicroseconds(50), s.PercentileMicroseconds(99), s.Count));
            }

            context.Output.WriteLine($"{ReportFormat.SizeLabel(size)}: {n.ToString(Invariant)} interleaved rounds in {sizeClock.Elapsed.TotalSeconds:0.0} s; load average {MachineLoad.Average()}");
            foreach (RemoteReadRig rig in rigs)
            {
                await rig.ForgetAsync(key, cancellation);
            }

            if (pods is not null)
            {
                await pods.ForgetAsync(key, cancellation);
            }

            await redis.KeyDeleteAsync(key);
        }

        return results;
    }

    private static int Iterations(long size, bool quick)
    {
        int full = size switch
        {
            <= 1L << 10 => 2000,
            <= 1L << 20 => 500,
            <= 16L << 20 => 100,
            _ => 30,
        };
        return quick ? Math.Max(8, full / 5) : full;
    }

    private static void Print(TextWriter output, IReadOnlyList<RemoteReadResult> results, bool quick)
    {
        output.WriteLine($"Remote read latency, microseconds (Stopwatch; nearest-rank percentiles; loopback; {(quick ? "quick" : "full")} mode); MB/s = MiB per second at p50");
        output.WriteLine();
        output.WriteLine("| size | path | p50 µs | p99 µs | n | MB/s |");
        output.WriteLine("|---:|---|---:|---:|---:|---:|");
        foreach (RemoteReadResult r in Ordered(results))
        {
            string mbs = r.SizeBytes >= ThroughputFrom ? Throughput(r).ToString("#,0", Invariant) : "-";
            output.WriteLine($"| {ReportFormat.SizeLabel(r.SizeBytes)} | {r.Path} | {ReportFormat.Latency(r.P50Us)} | {ReportFormat.Latency(r.P99Us)} | {ReportFormat.Count(r.N)} | {mbs} |");
        }

        output.WriteLine();
        output.WriteLine("Ratios (p50)");
        output.WriteLine();
        output.WriteLine("| size | rh / tcp_raw throughput | rh / redis_get latency | storage_direct / rh latency | rm / rh latency | rm / storage_direct latency | rm / max(storage_direct, rh) latency |");
        output.WriteLine("|---:|---:|---:|---:|---:|---:|---:|");
        var redisShort = new List<string>();
        var tcpShort = new List<string>();
        var shaped = new List<string>();
        var storageWins = new List<string>();
        foreach (long size in results.Select(r => r.SizeBytes).Distinct().Order())
        {
            double rh = P50(results, "rh", size);
            if (results.Any(r => r.Path == "rh_shaped" && r.SizeBytes == size))
            {
                double rhShaped = P50(results, "rh_shaped", size);
                double rmShaped = P50(results, "rm_shaped", size);
                double floor = P50(results, "tcp_raw_shaped", size);
                shaped.Add(
                    $"| {ReportFormat.SizeLabel(size)} | {ReportFormat.Ratio(floor / rhShaped)} | {ReportFormat.Ratio(rmShaped / floor)} | {ReportFormat.Ratio(rmShaped / rhShaped)} |");
            }

            double tcpRatio = P50(results, "tcp_raw", size) / rh;
            double redisRatio = rh / P50(results, "redis_get", size);
            double storageRatio = P50(results, "storage_direct", size) / rh;
            double rm = P50(results, "rm", size);
            double storage = P50(results, "storage_direct", size);
            output.WriteLine(
                $"| {ReportFormat.SizeLabel(size)} | {ReportFormat.Ratio(tcpRatio)} | {ReportFormat.Ratio(redisRatio)} | {ReportFormat.Ratio(storageRatio)} " +
                $"| {ReportFormat.Ratio(rm / rh)} | {ReportFormat.Ratio(rm / storage)} | {ReportFormat.Ratio(rm / Math.Max(storage, rh))} |");
            if (size <= RedisAimUpTo && redisRatio > RedisAim)
            {
                redisShort.Add($"{ReportFormat.SizeLabel(size)} ({ReportFormat.Ratio(redisRatio)})");
            }
            if (size >= TcpAimFrom && tcpRatio < TcpAim)
            {
                tcpShort.Add($"{ReportFormat.SizeLabel(size)} ({ReportFormat.Ratio(tcpRatio)})");
            }

            if (storageRatio <= 1)
            {
                storageWins.Add($"{ReportFormat.SizeLabel(size)} ({ReportFormat.Ratio(storageRatio)})");
            }
        }

        if (results.Any(r => r.Path == "rh_pods"))
        {
            // Each pod's read timed inside the reader pod (its cachelet's ReadAsync), as the loopback reader's is.
            output.WriteLine();
            output.WriteLine("Between two pods (podman bridge network, a veth per pod; storage in a container on the same network)");
            output.WriteLine();
            output.WriteLine("| size | rh_pods / rh latency | rm_pods / rm latency | rm_pods / rh_pods latency |");
            output.WriteLine("|---:|---:|---:|---:|");
            foreach (long size in results.Select(r => r.SizeBytes).Distinct().Order())
            {
                output.WriteLine(
                    $"| {ReportFormat.SizeLabel(size)} | {ReportFormat.Ratio(P50(results, "rh_pods", size) / P50(results, "rh", size))} " +
                    $"| {ReportFormat.Ratio(P50(results, "rm_pods", size) / P50(results, "rm", size))} | {ReportFormat.Ratio(P50(results, "rm_pods", size) / P50(results, "rh_pods", size))} |");
            }
        }

        if (shaped.Count > 0)
        {
            // Over the shaped link both the owner's download and its transfer cross the same 1 Gbit/s link (one each way),
            // so a one-pass remote miss costs about one link-time: rm_shaped / tcp_raw_shaped near 1x, not 2x.
            output.WriteLine();
            output.WriteLine($"Shaped link ({ShapedRate / 1_000_000} MB/s each way; the network, not the CPU, is the limit)");
            output.WriteLine();
            output.WriteLine("| size | rh_shaped / tcp_raw_shaped throughput | rm_shaped / tcp_raw_shaped latency | rm_shaped / rh_shaped latency |");
            output.WriteLine("|---:|---:|---:|---:|");
            foreach (string row in shaped)
            {
                output.WriteLine(row);
            }
        }

        output.WriteLine();
        output.WriteLine(
            $"aim: rh at least {TcpAim:0.0}x raw TCP throughput at >= {ReportFormat.SizeLabel(TcpAimFrom)}: " +
            (tcpShort.Count == 0 ? "met" : "NOT met at " + string.Join(", ", tcpShort)));
        output.WriteLine(
            $"aim: rh at most {RedisAim:0.0}x a Redis GET (redis_get) at {ReportFormat.SizeLabel(RedisAimUpTo)}: " +
            (redisShort.Count == 0 ? "met" : "NOT met at " + string.Join(", ", redisShort)));
        output.WriteLine(
            "aim: rh faster than storage_direct at every size: " +
            (storageWins.Count == 0 ? "met" : "NOT met at " + string.Join(", ", storageWins)));
    }

    private static string WriteCsv(string directory, IReadOnlyList<RemoteReadResult> results) =>
        ResultsCsv.Write(directory, CsvFileName, CsvHeader, Ordered(results).Select(r => string.Create(Invariant, $"{r.Path},{r.SizeBytes},{r.P50Us:0.###},{r.P99Us:0.###},{r.N}")));

    private static IEnumerable<RemoteReadResult> Ordered(IEnumerable<RemoteReadResult> results) =>
        results.OrderBy(r => r.SizeBytes).ThenBy(r => Array.IndexOf(PathNames, r.Path));

    private static double P50(IReadOnlyList<RemoteReadResult> results, string path, long size) =>
        results.Single(r => r.Path == path && r.SizeBytes == size).P50Us;

    private static double Throughput(RemoteReadResult r) => r.SizeBytes / (double)(1 << 20) / (r.P50Us / 1e6);
}

/// <summary>One row of remote-read.csv.</summary>
internal sealed record RemoteReadResult(string Path, long SizeBytes, double P50Us, double P99Us, int N);
