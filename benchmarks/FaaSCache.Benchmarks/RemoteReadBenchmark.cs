using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using FaaSCache.Caching;
using FaaSCache.Diagnostics;
using FaaSCache.Membership;
using FaaSCache.Ownership;
using FaaSCache.Options;
using FaaSCache.Peers;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using FaaSCache.TestSupport;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>remote-read</c>: how long a cachelet takes to get an object it does not hold from the object's owner, another
/// process, on loopback: remote hit (<c>rh</c>: the owner has it in memory) and remote miss (<c>rm</c>: the owner
/// fetches it from storage first), next to a plain download from Azurite (<c>storage_direct</c>) and the same bytes
/// over one raw TCP connection between two processes (<c>tcp_raw</c>, the floor), for 1 KB, 1 MB, 16 MB and 128 MB.
/// The owner is a FaaSCache host process (one instance of <c>benchmarks/apps/counter</c>, so it is the only member
/// of its app and owns every key); the reader is a <see cref="Cachelet"/> in this process with the owner's app key
/// (<see cref="PeerKey"/>), a <see cref="GrpcPeerClient"/> and a ring whose only member is the owner.
/// </summary>
internal static class RemoteReadBenchmark
{
    public const string CsvFileName = "remote-read.csv";
    public const string CsvHeader = "path,size_bytes,p50_us,p99_us,n";

    public static readonly string[] PathNames = ["rh", "rm", "storage_direct", "tcp_raw"];

    private const string ContainerName = "remote-read";
    private const string ReaderId = "bench-reader";
    private const long ThroughputFrom = 1L << 20;
    private const long TcpAimFrom = 16L << 20;
    private const double TcpAim = 0.5;
    private static readonly long[] Sizes = [1L << 10, 1L << 20, 16L << 20, 128L << 20];
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private static int _sink;

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken cancellation = context.Cancellation;
        var wall = Stopwatch.StartNew();
        output.WriteLine($"remote-read ({(context.Quick ? "quick" : "full")} mode); load average {ReportFormat.LoadAverage()}");
        output.WriteLine("link: loopback on one machine (owner, reader, Azurite and the TCP sender are processes on this machine; no netem)");

        await using AzuriteServer azurite = await AzuriteServer.StartAsync(cancellation);
        BlobContainerClient container = new BlobServiceClient(azurite.ConnectionString, AzureBlobStore.CreateClientOptions()).GetBlobContainerClient(ContainerName);
        await container.CreateIfNotExistsAsync(cancellationToken: cancellation);

        // The owner: one host instance; alone in its membership list, so it owns every key.
        string appName = $"remote-read-{Guid.NewGuid().ToString("N")[..8]}";
        using FunctionAppFolder app = BenchAppFolder.Copy("counter", json => BenchAppFolder.SetFaaSCache(json, "consistency", "owner"));
        await using HostProcessCluster owners = await HostProcessCluster.StartAsync(app.Path, azurite.ConnectionString, appName, 1, cancellationToken: cancellation);
        ClusterInstance owner = owners.Instances[0];
        var ownerEndpoint = new Uri((await owner.Host.GetStatusAsync(cancellation)).PeerEndpoint!);
        output.WriteLine($"owner: FaaSCache host pid {owner.Host.ProcessId.ToString(Invariant)}, instance {owner.Id}, peers at {ownerEndpoint}");

        // The reader: a cachelet in this process, same app key, a ring with the owner as its only member.
        using var readerShm = new TempShmDirectory("faascache-bench-remote-read");
        var directory = new FixedPeerDirectory(owner.Id, ownerEndpoint);
        using var peers = new GrpcPeerClient(directory, PeerKey.FromConnectionString(azurite.ConnectionString, appName));
        var options = new FaaSCacheOptions { Consistency = ConsistencyPreset.Owner, CapacityBytes = 1L << 30 };
        await using var reader = new Cachelet(
            options,
            AzureBlobStore.FromConnectionString(azurite.ConnectionString),
            new SharedMemoryStore(ReaderId, [readerShm.Path]),
            new RingOwnerLocator(ReaderId, [owner.Id]),
            peers: peers);

        await using TcpFloor tcp = await TcpFloor.StartAsync(Sizes.Max(), cancellation);
        output.WriteLine($"tcp_raw: benchmarks/tools/tcp_floor_sender.py, pid {tcp.ProcessId.ToString(Invariant)}");
        output.WriteLine(
            $"iterations per path: {string.Join(", ", Sizes.Select(s => $"{ReportFormat.SizeLabel(s)} {Iterations(s, context.Quick).ToString(Invariant)}"))}" +
            $"{(context.Quick ? " (quick: a fifth of the full run's)" : string.Empty)}");
        output.WriteLine();

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
            data = null;
            byte[] buffer = new byte[size];
            buffer.AsSpan().Fill(1); // touched before it is measured, as the floor should be

            List<RemotePath> paths =
            [
                new("rh", async ct =>
                {
                    reader.Remove(key);
                    long t0 = Stopwatch.GetTimestamp();
                    using (ObjectLease lease = await reader.ReadAsync(key, ct))
                    {
                        Check(lease, ReadSource.RemoteHit, size);
                    }

                    return Stopwatch.GetTimestamp() - t0;
                }),
                new("rm", async ct =>
                {
                    reader.Remove(key);
                    await owner.RemoveFromCacheAsync(key, ct);
                    long t0 = Stopwatch.GetTimestamp();
                    using (ObjectLease lease = await reader.ReadAsync(key, ct))
                    {
                        Check(lease, ReadSource.RemoteMiss, size);
                    }

                    return Stopwatch.GetTimestamp() - t0;
                }),
                new("storage_direct", async ct =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    using (BlobDownloadStreamingResult download = (await blob.DownloadStreamingAsync(cancellationToken: ct)).Value)
                    {
                        await download.Content.ReadExactlyAsync(buffer, ct);
                    }

                    _sink += buffer[0] + buffer[^1];
                    return Stopwatch.GetTimestamp() - t0;
                }),
                new("tcp_raw", async ct =>
                {
                    long t0 = Stopwatch.GetTimestamp();
                    await tcp.ReadAsync(buffer, ct);
                    _sink += buffer[0] + buffer[^1];
                    return Stopwatch.GetTimestamp() - t0;
                }),
            ];

            // The first read fills the owner (a remote miss); rh then finds it there. rm refills it each time.
            using (ObjectLease first = await reader.ReadAsync(key, cancellation))
            {
                Check(first, ReadSource.RemoteMiss, size);
            }

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
            foreach (RemotePath p in paths)
            {
                LatencySamples s = samples[p.Name];
                results.Add(new RemoteReadResult(p.Name, size, s.PercentileMicroseconds(50), s.PercentileMicroseconds(99), s.Count));
            }

            output.WriteLine($"{ReportFormat.SizeLabel(size)}: {n.ToString(Invariant)} interleaved rounds in {sizeClock.Elapsed.TotalSeconds:0.0} s; load average {ReportFormat.LoadAverage()}");
            reader.Remove(key);
            await owner.RemoveFromCacheAsync(key, cancellation);
        }

        CacheletCounters counters = reader.Metrics.Snapshot();
        output.WriteLine($"reader counters: {JsonSerializer.Serialize(counters)}");
        output.WriteLine();
        Print(output, results, context.Quick);
        string csv = WriteCsv(context.ResultsDirectory, results);
        output.WriteLine();
        output.WriteLine($"wrote {csv}");
        IReadOnlyList<string> stopped = await owners.StopAsync();
        output.WriteLine($"owner stopped: {string.Join("; ", stopped)}");
        output.WriteLine($"wall time {wall.Elapsed.TotalSeconds:0} s; load average at the end {ReportFormat.LoadAverage()}");
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

    private static void Check(ObjectLease lease, ReadSource expected, long size)
    {
        if (lease.Source != expected || lease.Count != size)
        {
            throw new InvalidOperationException($"{lease.Key}: expected a {expected} of {size} bytes, got a {lease.Source} of {lease.Count} bytes.");
        }

        ReadOnlySpan<byte> span = lease.Span;
        _sink += span[0] + span[^1];
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
        output.WriteLine("| size | rh / tcp_raw throughput | storage_direct / rh latency | rm / rh latency | rm / storage_direct latency |");
        output.WriteLine("|---:|---:|---:|---:|---:|");
        var tcpShort = new List<string>();
        var storageWins = new List<string>();
        foreach (long size in results.Select(r => r.SizeBytes).Distinct().Order())
        {
            double rh = P50(results, "rh", size);
            double tcpRatio = P50(results, "tcp_raw", size) / rh;
            double storageRatio = P50(results, "storage_direct", size) / rh;
            output.WriteLine(
                $"| {ReportFormat.SizeLabel(size)} | {ReportFormat.Ratio(tcpRatio)} | {ReportFormat.Ratio(storageRatio)} " +
                $"| {ReportFormat.Ratio(P50(results, "rm", size) / rh)} | {ReportFormat.Ratio(P50(results, "rm", size) / P50(results, "storage_direct", size))} |");
            if (size >= TcpAimFrom && tcpRatio < TcpAim)
            {
                tcpShort.Add($"{ReportFormat.SizeLabel(size)} ({ReportFormat.Ratio(tcpRatio)})");
            }

            if (storageRatio <= 1)
            {
                storageWins.Add($"{ReportFormat.SizeLabel(size)} ({ReportFormat.Ratio(storageRatio)})");
            }
        }

        output.WriteLine();
        output.WriteLine(
            $"aim: rh at least {TcpAim:0.0}x raw TCP throughput at >= {ReportFormat.SizeLabel(TcpAimFrom)}: " +
            (tcpShort.Count == 0 ? "met" : "NOT met at " + string.Join(", ", tcpShort)));
        output.WriteLine(
            "aim: rh faster than storage_direct at every size: " +
            (storageWins.Count == 0 ? "met" : "NOT met at " + string.Join(", ", storageWins)));
    }

    private static string WriteCsv(string directory, IReadOnlyList<RemoteReadResult> results)
    {
        Directory.CreateDirectory(directory);
        var csv = new StringBuilder();
        csv.Append(CsvHeader).Append('\n');
        foreach (RemoteReadResult r in Ordered(results))
        {
            csv.Append(Invariant, $"{r.Path},{r.SizeBytes},{r.P50Us:0.###},{r.P99Us:0.###},{r.N}").Append('\n');
        }

        string path = Path.Combine(directory, CsvFileName);
        File.WriteAllText(path, csv.ToString());
        return path;
    }

    private static IEnumerable<RemoteReadResult> Ordered(IEnumerable<RemoteReadResult> results) =>
        results.OrderBy(r => r.SizeBytes).ThenBy(r => Array.IndexOf(PathNames, r.Path));

    private static double P50(IReadOnlyList<RemoteReadResult> results, string path, long size) =>
        results.Single(r => r.Path == path && r.SizeBytes == size).P50Us;

    private static double Throughput(RemoteReadResult r) => r.SizeBytes / (double)(1 << 20) / (r.P50Us / 1e6);

    /// <summary>One timed path of one size; <see cref="Once"/> does its untimed set-up and returns the ticks of the timed read.</summary>
    private sealed record RemotePath(string Name, Func<CancellationToken, ValueTask<long>> Once) : ITimedPath
    {
        public ValueTask<long> RunOnceAsync(CancellationToken cancellationToken) => Once(cancellationToken);
    }

    /// <summary>The one member the reader ever asks.</summary>
    private sealed class FixedPeerDirectory(string memberId, Uri endpoint) : IPeerDirectory
    {
        public bool TryGetEndpoint(string id, out Uri value)
        {
            value = endpoint;
            return id == memberId;
        }
    }
}

/// <summary>One row of remote-read.csv.</summary>
internal sealed record RemoteReadResult(string Path, long SizeBytes, double P50Us, double P99Us, int N);
