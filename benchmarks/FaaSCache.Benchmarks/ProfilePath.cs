namespace FaaSCache.Benchmarks;

/// <summary>
/// profile-path: one or a few cachelet-read paths at one size, run interleaved for a fixed time with nothing else in
/// the process, so a profiler attached to it (benchmarks/profile: dotnet-trace, perf) sees only that path's work.
/// Prints each path's p50 and n; the first second is an untimed warm-up.
/// </summary>
internal static class ProfilePath
{
    public const string Name = "profile-path";

    /// <summary>The remote-read paths profile-path can run (an owner host process, this process the reader).</summary>
    private static readonly string[] RemotePaths = ["rh", "rm", "tcp_raw", "redis_get"];

    /// <summary>
    /// Runs <paramref name="pathNames"/> (cachelet-read names: lm, storage_direct, lh_strong, ...; or remote-read names: rh,
    /// rm, tcp_raw) on an object of <paramref name="size"/> bytes.
    /// </summary>
    public static async Task RunAsync(BenchmarkContext context, IReadOnlyList<string> pathNames, long size, TimeSpan duration, TimeSpan pause = default)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        context.WriteHeader(Name);
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        if (pathNames.Any(RemotePaths.Contains))
        {
            await RunRemoteAsync(context, azurite, pathNames, size, duration, pause);
            return;
        }

        await using RedisServer redis = await RedisServer.StartAsync(ct);
        using var shm = new TempShmDirectory("faascache-bench");
        await using CacheletReadRig rig = await CacheletReadRig.CreateAsync(azurite, redis, shm.Path, ct);
        IReadOnlyList<ReadPath> all = await rig.LoadAsync(size, 20211101, ct);
        var paths = pathNames
            .Select(n => all.FirstOrDefault(p => p.Name == n)
                ?? throw new ArgumentException($"--path '{n}' is not a cachelet-read path (allowed: {string.Join(", ", all.Select(p => p.Name))})."))
            .ToList();

        await MeasureAsync(output, paths, pathNames, size, duration, pause, ct);
        output.WriteLine(rig.Counters());
        await rig.UnloadAsync(size, ct);
    }

    /// <summary>Remote paths: the remote-read rig on loopback (an owner host process that owns every key, this process reads).</summary>
    private static async Task RunRemoteAsync(BenchmarkContext context, AzuriteServer azurite, IReadOnlyList<string> pathNames, long size, TimeSpan duration, TimeSpan pause)
    {
        CancellationToken ct = context.Cancellation;
        string? unknown = pathNames.FirstOrDefault(n => !RemotePaths.Contains(n));
        if (unknown is not null)
        {
            throw new ArgumentException($"--path '{unknown}' cannot be profiled beside remote paths (allowed together: {string.Join(", ", RemotePaths)}).");
        }

        var container = new Azure.Storage.Blobs.BlobContainerClient(azurite.ConnectionString, "profile-remote", FaaSCache.Storage.AzureBlobStore.CreateClientOptions());
        await container.CreateIfNotExistsAsync(cancellationToken: ct);
        var data = new byte[size];
        new Random(20211101).NextBytes(data);
        await container.GetBlobClient("object").UploadAsync(BinaryData.FromBytes(data), overwrite: true, ct);
        using FunctionAppFolder app = BenchAppFolder.Copy("counter", json => BenchAppFolder.SetFaaSCache(json, "consistency", "owner"));
        await using RemoteReadRig rig = await RemoteReadRig.StartAsync(azurite, app.Path, string.Empty, null, size, context.Output, ct);
        string key = "profile-remote/object";
        await rig.FillOwnerAsync(key, size, ct);
        List<ITimedPath> paths = rig.Paths(key, size, data).Where(p => pathNames.Contains(p.Name)).ToList();
        await using RedisServer? redisServer = pathNames.Contains("redis_get") ? await RedisServer.StartAsync(ct) : null;
        await using StackExchange.Redis.ConnectionMultiplexer? redis = redisServer is null ? null : await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync(redisServer.Endpoint);
        if (redis is not null)
        {
            // The floor of a small remote hit, as remote-read measures it: one GET into a new array.
            await redis.GetDatabase().StringSetAsync(key, data);
            paths.Add(new RemoteReadRig.RemotePath("redis_get", async token =>
            {
                long t0 = Stopwatch.GetTimestamp();
                byte[] value = (byte[]?)await redis.GetDatabase().StringGetAsync(key) ?? throw new InvalidOperationException($"redis has no '{key}'.");
                return value.LongLength == size ? Stopwatch.GetTimestamp() - t0 : throw new InvalidOperationException($"redis returned {value.LongLength} bytes, not {size}.");
            }));
        }

        await MeasureAsync(context.Output, paths, pathNames, size, duration, pause, ct);
        context.Output.WriteLine($"reader counters: {System.Text.Json.JsonSerializer.Serialize(rig.Reader.Metrics.Snapshot())}");
        await rig.ForgetAsync(key, ct);
        context.Output.WriteLine($"owner stopped: {string.Join("; ", await rig.StopAsync())}");
    }

    private static async Task MeasureAsync<TPath>(TextWriter output, List<TPath> paths, IReadOnlyList<string> pathNames, long size, TimeSpan duration, TimeSpan pause, CancellationToken ct)
        where TPath : ITimedPath
    {
        var warmup = Stopwatch.StartNew();
        while (warmup.Elapsed < TimeSpan.FromSeconds(1))
        {
            await Interleaved.RunAsync(paths, _ => 1, samples: null, ct);
        }

        // The marker lines let benchmarks/profile cut the warm-up out of a perf recording (perf's --delay needs a time).
        output.WriteLine($"profile-path: measuring {string.Join(", ", pathNames)} at {ReportFormat.SizeLabel(size)} for {duration.TotalSeconds:0} s");
        await output.FlushAsync(ct);
        var samples = paths.ToDictionary(p => p.Name, _ => new LatencySamples(1024));
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration)
        {
            await Interleaved.RunAsync(paths, _ => 1, samples, ct);
            if (pause > TimeSpan.Zero)
            {
                await Task.Delay(pause, ct);
            }
        }

        foreach (TPath p in paths)
        {
            LatencySamples s = samples[p.Name];
            output.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"{p.Name} {ReportFormat.SizeLabel(size)}: p50 {s.PercentileMicroseconds(50):0} µs, p99 {s.PercentileMicroseconds(99):0} µs, n {s.Count}"));
        }

        if (paths.Count == 2)
        {
            double ratio = samples[paths[0].Name].PercentileMicroseconds(50) / samples[paths[1].Name].PercentileMicroseconds(50);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{paths[0].Name} / {paths[1].Name} p50: {ratio:0.00}x"));
        }
    }

    /// <summary>Parses 1KB, 64KB, 1MB, 128MB (binary units) or a byte count.</summary>
    public static long ParseSize(string text)
    {
        string t = text.Trim().ToUpperInvariant();
        (string digits, long unit) = t.EndsWith("KB", StringComparison.Ordinal) ? (t[..^2], 1L << 10)
            : t.EndsWith("MB", StringComparison.Ordinal) ? (t[..^2], 1L << 20)
            : (t, 1L);
        return long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out long n) && n > 0
            ? n * unit
            : throw new ArgumentException($"--size '{text}' is not a size (allowed: a positive number with KB or MB, e.g. 128MB, or bytes).");
    }
}
