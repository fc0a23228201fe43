using System.Diagnostics;
using FaaSCache.Options;
using FaaSCache.Testing;

namespace FaaSCache.Benchmarks;

/// <summary>
/// sdk-read (issue 24 item 5): an unmodified storage SDK reading a blob whole into memory, straight from storage
/// (<c>storage_direct</c>) and through the SDK endpoint as a hit (<c>endpoint_hit</c>) and as a miss
/// (<c>endpoint_miss</c>), for the .NET, Node and Python SDKs, 1 KB .. 128 MB; beside them the same read as a binding
/// makes it (<c>binding_hit</c>, .NET only: a Python or Node binding hit is <c>benchmarks/run invoke</c>'s lh rows),
/// and the same SDK against a server that only answers from memory (<c>client_floor</c>, <see cref="SdkFloorServer"/>):
/// the SDK's own time, which bounds what any endpoint can make of a hit.
/// One process: its own Azurite, a cachelet and the endpoint on a loopback port; the SDKs one after the other.
/// </summary>
internal static class SdkReadBenchmark
{
    public const string Name = "sdk-read";

    public const string StorageDirect = "storage_direct";
    public const string EndpointHit = "endpoint_hit";
    public const string EndpointMiss = "endpoint_miss";
    public const string BindingHit = "binding_hit";
    public const string ClientFloor = "client_floor";

    /// <summary>Canonical orders (tables and CSV).</summary>
    public static readonly string[] SdkNames = ["dotnet", "node", "python"];

    public static readonly string[] PathNames = [StorageDirect, EndpointHit, EndpointMiss, BindingHit, ClientFloor];

    public static readonly long[] Sizes = [1L << 10, 64L << 10, 1L << 20, 16L << 20, 128L << 20];

    private const int Seed = 20261124;

    /// <summary>
    /// Puts the endpoint over a cachelet of another preset (e.g. <c>local</c>: hits without the default's version check),
    /// with results in <c>sdk-read-&lt;preset&gt;.csv</c>; unset, the default preset and <c>sdk-read.csv</c>.
    /// </summary>
    public const string ConsistencyVariable = "FAASCACHE_SDK_READ_CONSISTENCY";

    /// <summary>Before the first size the server side (Kestrel, the cachelet, the .NET client) runs this long untimed: a host is long-running and warm.</summary>
    private static readonly TimeSpan ServerWarmup = TimeSpan.FromSeconds(3);

    public static async Task RunAsync(BenchmarkContext context)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        var total = Stopwatch.StartNew();
        context.WriteHeader(Name);

        ConsistencyPreset? consistency = ConsistencyFromEnvironment();
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        using var shm = new TempShmDirectory("faascache-bench");
        await using SdkReadRig rig = await SdkReadRig.StartAsync(azurite, shm.Path, consistency, ct);
        string preset = PresetName(rig.Consistency);
        output.WriteLine(
            $"sdk endpoint: {rig.Address.BlobEndpoint} over a cachelet (consistency {preset}" +
            (consistency is null ? ", the default" : $", from {ConsistencyVariable}") +
            (rig.Consistency == ConsistencyPreset.Strong ? ": each hit checks the blob's ETag with storage, one conditional request" : string.Empty) +
            $"), capacity {SdkReadRig.CacheletCapacityBytes >> 20} MiB, shared memory {shm.Path}");
        IReadOnlyList<ISdkReader> readers = await SdkReaders.CreateAsync(SdkReadRig.ContainerName, ct);
        foreach (ISdkReader reader in readers)
        {
            output.WriteLine($"  {reader.Sdk,-6}  {reader.Description}");
        }

        int rounds = context.Quick ? 1 : 3;
        output.WriteLine(
            $"{rounds} round(s) per size; in each, every SDK in turn runs its three paths in a shuffled order " +
            "(storage_direct, endpoint_hit and client_floor read the hot blob, endpoint_miss blobs not cached, each once), then binding_hit");
        output.WriteLine();

        var results = new List<SdkPathResult>();
        var endpointPerHit = new Dictionary<(string Sdk, long Size), EndpointShare>();
        var random = new Random(Seed);
        for (int i = 0; i < Sizes.Length; i++)
        {
            long size = Sizes[i];
            (int reads, int misses) = Counts(size, context.Quick);
            var sizeClock = Stopwatch.StartNew();
            output.Write($"{ReportFormat.SizeLabel(size),7}: uploading {misses + 2} blobs...");
            await output.FlushAsync(ct);
            SdkReadBlobs blobs = await rig.LoadAsync(size, misses, Seed + i, ct);
            if (i == 0)
            {
                output.Write(" warming up the server side...");
                await output.FlushAsync(ct);
                await WarmUpAsync(rig, readers[0], blobs, context.Quick ? ServerWarmup / 3 : ServerWarmup, ct);
            }

            output.Write(" measuring");
            await output.FlushAsync(ct);
            results.AddRange(await MeasureSizeAsync(rig, readers, blobs, reads, rounds, random, endpointPerHit, output, ct));
            await rig.UnloadAsync(blobs, ct);
            output.WriteLine($" done in {sizeClock.Elapsed.TotalSeconds:0.0} s");
            output.WriteLine($"         p50 µs direct / hit / miss: {string.Join("; ", SdkNames.Select(sdk => $"{sdk} {P50(results, sdk, size)}"))}");
        }

        output.WriteLine();
        SdkReadReport.Print(output, results, endpointPerHit, context.Quick);
        string csvName = consistency is null ? SdkReadReport.CsvFileName : $"{Path.GetFileNameWithoutExtension(SdkReadReport.CsvFileName)}-{preset}.csv";
        string csv = SdkReadReport.WriteCsv(context.ResultsDirectory, context.ResultsFile(csvName), results);
        output.WriteLine();
        output.WriteLine($"wrote {csv}");
        output.WriteLine($"measured in {total.Elapsed.TotalSeconds:0} s (servers stop next)");
    }

    /// <summary>
    /// One size: <paramref name="rounds"/> rounds, in each every SDK in turn runs its three paths in a shuffled order
    /// (the hot blob <paramref name="reads"/> / rounds times for storage_direct and endpoint_hit, a share of the
    /// misses once each), then binding_hit as many times; slow drifts of the machine hit every path alike.
    /// </summary>
    private static async Task<IReadOnlyList<SdkPathResult>> MeasureSizeAsync(
        SdkReadRig rig,
        IReadOnlyList<ISdkReader> readers,
        SdkReadBlobs blobs,
        int reads,
        int rounds,
        Random random,
        Dictionary<(string Sdk, long Size), EndpointShare> endpointPerHit,
        TextWriter output,
        CancellationToken ct)
    {
        var samples = new Dictionary<(string Sdk, string Path), LatencySamples>();
        LatencySamples Samples(string sdk, string path) =>
            samples.TryGetValue((sdk, path), out LatencySamples? s) ? s : samples[(sdk, path)] = new LatencySamples(reads);
        IReadOnlyList<string>[] missChunks = [.. blobs.Misses.Chunk((blobs.Misses.Count + rounds - 1) / rounds)];
        int readsPerRound = Math.Max(1, reads / rounds);
        for (int round = 0; round < rounds; round++)
        {
            foreach (ISdkReader reader in readers)
            {
                string[] order = [StorageDirect, EndpointHit, EndpointMiss, ClientFloor];
                random.Shuffle(order);
                foreach (string path in order)
                {
                    IReadOnlyList<string> missBlobs = round < missChunks.Length ? missChunks[round] : [];
                    if (path == EndpointMiss && missBlobs.Count == 0)
                    {
                        continue;
                    }

                    (SdkBatch batch, EndpointReadCounts.Snapshot served) = await RunBatchAsync(rig, reader, path, blobs, missBlobs, readsPerRound, ct);
                    if (path == EndpointHit)
                    {
                        // The warm-up reads' requests are those of more reads of the same size.
                        EndpointShare share = endpointPerHit.GetValueOrDefault((reader.Sdk, blobs.Size));
                        endpointPerHit[(reader.Sdk, blobs.Size)] = new EndpointShare(
                            share.Reads + batch.Downloads.Count + batch.WarmupReads,
                            share.Requests + served.Requests,
                            share.ServerUs + LatencySamples.ToMicroseconds(served.ServerTicks));
                    }

                    LatencySamples s = Samples(reader.Sdk, path);
                    foreach (SdkDownload d in batch.Downloads)
                    {
                        s.Add((long)(d.Microseconds * Stopwatch.Frequency / 1_000_000));
                    }

                    output.Write('.');
                    await output.FlushAsync(ct);
                }
            }

            LatencySamples binding = Samples("dotnet", BindingHit);
            for (int n = 0; n < readsPerRound; n++)
            {
                binding.Add(await rig.BindingReadAsync(blobs.Hot, ct));
            }
        }

        return [.. samples.Select(e => new SdkPathResult(e.Key.Sdk, e.Key.Path, blobs.Size, e.Value.PercentileMicroseconds(50), e.Value.PercentileMicroseconds(99), e.Value.Count))];
    }

    /// <summary>One SDK's batch of one path, checked: every download whole, and the endpoint's answers what the path says.</summary>
    private static async Task<(SdkBatch Batch, EndpointReadCounts.Snapshot Served)> RunBatchAsync(
        SdkReadRig rig, ISdkReader reader, string path, SdkReadBlobs blobs, IReadOnlyList<string> missBlobs, int reads, CancellationToken ct)
    {
        EndpointReadCounts.Snapshot before = await rig.CountsAsync(ct);
        SdkBatch batch = path switch
        {
            StorageDirect => await reader.ReadAsync(rig.DirectConnectionString, blobs.Warmup, [blobs.Hot], reads, ct),
            EndpointHit => await reader.ReadAsync(rig.EndpointConnectionString, blobs.Warmup, [blobs.Hot], reads, ct),
            ClientFloor => await reader.ReadAsync(rig.FloorConnectionString, blobs.Warmup, [blobs.Hot], reads, ct),
            _ => await reader.ReadAsync(rig.EndpointConnectionString, blobs.Warmup, missBlobs, 1, ct),
        };
        EndpointReadCounts.Snapshot served = await rig.CountsAsync(ct) - before;
        Verify(reader.Sdk, path, blobs.Size, batch.Downloads, served);
        if (path == EndpointMiss)
        {
            // The next SDK's read of these blobs is a miss again, properties and all.
            rig.Evict(missBlobs);
        }

        return (batch, served);
    }

    /// <summary>
    /// Reads per path and size: reads of the hot blob for storage_direct, endpoint_hit and binding_hit, and blobs
    /// read once each for endpoint_miss (per SDK). A full run takes a few minutes on 2 cores; --quick about a tenth.
    /// </summary>
    public static (int Reads, int Misses) Counts(long size, bool quick) => (size, quick) switch
    {
        (<= 1L << 10, false) => (600, 30),
        (<= 64L << 10, false) => (300, 30),
        (<= 1L << 20, false) => (150, 21),
        (<= 16L << 20, false) => (30, 9),
        (_, false) => (9, 4),
        (<= 1L << 10, true) => (60, 6),
        (<= 64L << 10, true) => (30, 6),
        (<= 1L << 20, true) => (15, 4),
        (<= 16L << 20, true) => (5, 3),
        (_, true) => (3, 2),
    };

    /// <summary>The preset <see cref="ConsistencyVariable"/> names, or null when it is unset.</summary>
    private static ConsistencyPreset? ConsistencyFromEnvironment()
    {
        string? value = Environment.GetEnvironmentVariable(ConsistencyVariable);
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }

        if (!char.IsAsciiDigit(value.Trim()[0]) && Enum.TryParse(value.Trim(), ignoreCase: true, out ConsistencyPreset preset) && Enum.IsDefined(preset))
        {
            return preset;
        }

        throw new ArgumentException(
            $"{ConsistencyVariable}='{value}' is not a consistency preset: use one of {string.Join(", ", Enum.GetValues<ConsistencyPreset>().Select(PresetName))}, or leave it unset for the default.");
    }

    /// <summary>A preset as host.json spells it: strong, ownerLocalRead.</summary>
    private static string PresetName(ConsistencyPreset preset)
    {
        string name = preset.ToString();
        return char.ToLowerInvariant(name[0]) + name[1..];
    }

    /// <summary>Untimed reads through every in-process path until JIT tiering has settled; the child processes warm up on their own.</summary>
    private static async Task WarmUpAsync(SdkReadRig rig, ISdkReader dotnet, SdkReadBlobs blobs, TimeSpan duration, CancellationToken ct)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration)
        {
            await dotnet.ReadAsync(rig.EndpointConnectionString, blobs.Warmup, [blobs.Hot], 20, ct);
            await dotnet.ReadAsync(rig.DirectConnectionString, blobs.Warmup, [blobs.Hot], 20, ct);
            for (int n = 0; n < 200; n++)
            {
                await rig.BindingReadAsync(blobs.Hot, ct);
            }
        }
    }

    /// <summary>Each read returned the whole blob, and the endpoint served the batch as its path says (counted where it answered).</summary>
    private static void Verify(string sdk, string path, long size, IReadOnlyList<SdkDownload> downloads, EndpointReadCounts.Snapshot served)
    {
        if (downloads.FirstOrDefault(d => d.Bytes != size) is { Bytes: not 0 } wrong)
        {
            throw new InvalidOperationException($"{sdk} {path} at {ReportFormat.SizeLabel(size)}: a download returned {wrong.Bytes} bytes, expected {size}.");
        }

        bool ok = path switch
        {
            StorageDirect or ClientFloor => served.Requests == 0,
            EndpointHit => served.LocalMisses == 0 && served.Other == 0 && served.Forwarded == 0 && served.LocalHits > downloads.Count,
            _ => served.LocalMisses == downloads.Count && served.Other == 0 && served.Forwarded == 0,
        };
        if (!ok)
        {
            string expected = path switch
            {
                StorageDirect or ClientFloor => "no request at the endpoint",
                EndpointHit => $"only local hits, at least {downloads.Count + 1} (the reads and the warm-up)",
                _ => $"exactly {downloads.Count} local misses (one per blob) and otherwise local hits",
            };
            throw new InvalidOperationException($"{sdk} {path} at {ReportFormat.SizeLabel(size)}: the endpoint answered {served}; expected {expected}.");
        }
    }

    private static string P50(List<SdkPathResult> results, string sdk, long size) => string.Join(
        " / ",
        PathNames[..3].Select(p => results.SingleOrDefault(r => r.Sdk == sdk && r.Path == p && r.SizeBytes == size) is { } r ? ReportFormat.Latency(r.P50Us) : "-"));
}

/// <summary>What the endpoint did for an SDK's hits of one size (the warm-up reads included): requests, and its own time in microseconds.</summary>
internal readonly record struct EndpointShare(long Reads, long Requests, double ServerUs)
{
    public double RequestsPerRead => Requests / (double)Reads;

    public double ServerUsPerRead => ServerUs / Reads;
}

/// <summary>One row of the result: p50/p99 in microseconds over n timed reads.</summary>
internal sealed record SdkPathResult(string Sdk, string Path, long SizeBytes, double P50Us, double P99Us, int N);
