using System.Text.Json.Nodes;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>prewarm</c>: the paper's §3.3 AMBER Alert numbers. The sample in <c>samples/amber-alert</c> (BoundingBox over HTTP,
/// then People and Car on the labelled image; models of 35, 97 and 5 MiB, seeded as <c>seed.sh</c> does) is invoked
/// after an unload, three ways, interleaved per repetition: <b>cold</b> (the host is started at the request:
/// pre-warm off), <b>histogram</b> (the hybrid histogram alone: the host was started ahead, its cache empty, pre-warm
/// off) and <b>prewarm</b> (the host was started ahead and its Load Daemon has loaded what the snapshots of earlier
/// lifetimes selected). The time is from the request (cold: from the host's launch) to the end of the last of the
/// three functions for that image, from the host's own invocation records. Two lifetimes with pre-warm on run first
/// so that the models appear in two snapshots (accessed more than once: §3.3's rule for rarely-invoked apps).
/// </summary>
internal static class PrewarmBenchmark
{
    public const string CsvFileName = "prewarm.csv";
    public const string CsvHeader = "mode,first_invocation_ms,n";

    private const string AppName = "amber-alert";
    private const int SnapshotLifetimes = 2;
    private static readonly (string Name, int MiB)[] Models = [("bounding-box.bin", 35), ("people.bin", 97), ("car.bin", 5)];
    private static readonly string[] Modes = ["cold", "histogram", "prewarm"];
    private static readonly TimeSpan PipelineTimeout = TimeSpan.FromMinutes(2);
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken cancellation = context.Cancellation;
        int repetitions = context.Quick ? 2 : 5;
        context.WriteHeader("prewarm");
        output.WriteLine($"AMBER Alert after an unload: {string.Join(" ", Modes)}, {repetitions} repetition(s) each, interleaved; load average {MachineLoad.Average()}");

        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        var storage = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        await SeedAsync(storage, output, cancellation);
        using FunctionAppFolder withPrewarm = CopySample(prewarm: true);
        using FunctionAppFolder withoutPrewarm = CopySample(prewarm: false);

        int image = 0;
        for (int n = 1; n <= SnapshotLifetimes; n++)
        {
            (double ms, HostStatus status) = await RunLifetimeAsync("prewarm", withPrewarm, azurite, storage, ++image, cancellation);
            output.WriteLine($"  snapshot lifetime {n}: pipeline {ms:0} ms, Load Daemon loaded {status.Prewarm?.Loaded ?? 0} object(s)");
        }

        var samples = Modes.ToDictionary(m => m, _ => new List<double>());
        for (int rep = 1; rep <= repetitions; rep++)
        {
            foreach (string mode in Modes)
            {
                FunctionAppFolder app = mode == "prewarm" ? withPrewarm : withoutPrewarm;
                (double ms, HostStatus status) = await RunLifetimeAsync(mode, app, azurite, storage, ++image, cancellation);
                samples[mode].Add(ms);
                string prewarmed = status.Prewarm is { } p && p.Enabled
                    ? $", Load Daemon: {p.Loaded} object(s), {ReportFormat.SizeLabel(p.BytesLoaded)} in {p.Elapsed.TotalMilliseconds:0} ms"
                    : string.Empty;
                output.WriteLine($"  rep {rep} {mode,-9} {ms,8:0} ms{prewarmed}");
            }
        }

        Report(context, samples);
    }

    /// <summary>One host lifetime: start, (wait for pre-warm), invoke the pipeline once for a new image, stop (SIGTERM: the snapshot).</summary>
    private static async Task<(double Ms, HostStatus Status)> RunLifetimeAsync(string mode, FunctionAppFolder app, AzuriteServer azurite, IBlobStore storage, int image, CancellationToken cancellation)
    {
        string name = $"run-{image}.ppm";
        await storage.UploadAsync($"images/{name}", new MemoryStream(Ppm(image)), cancellation);
        using var shm = new TempShmDirectory("faascache-bench-prewarm");
        var args = new Dictionary<string, string> { ["--app-name"] = AppName, ["--blob-poll-interval"] = "0.2" };
        DateTimeOffset launched = DateTimeOffset.UtcNow;
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path, cache: true, args, cancellationToken: cancellation);
        await host.WaitForWorkersAsync(cancellationToken: cancellation);
        if (mode == "prewarm")
        {
            await WaitForPrewarmAsync(host, cancellation);
        }

        DateTimeOffset requested = mode == "cold" ? launched : DateTimeOffset.UtcNow;
        using HttpResponseMessage response = await host.Http.PostAsync(new Uri(host.BaseUri, $"/api/bounding-box/{name}"), null, cancellation);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"BoundingBox answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync(cancellation)}{Environment.NewLine}{host.Output}");
        }

        DateTimeOffset end = DateTimeOffset.MinValue;
        foreach (string function in new[] { "BoundingBox", "People", "Car" })
        {
            InvocationRecord done = (await host.WaitForInvocationsAsync(function, 1, PipelineTimeout, r => r.Status != "running", cancellation))[0];
            if (done.Status != "succeeded")
            {
                throw new InvalidOperationException($"{function} {done.Status}: {done.Error}{Environment.NewLine}{host.Output}");
            }

            DateTimeOffset finished = done.StartedAt + TimeSpan.FromMilliseconds(done.DurationMs);
            end = finished > end ? finished : end;
        }

        HostStatus status = await host.GetStatusAsync(cancellation);
        await host.StopAsync();
        return ((end - requested).TotalMilliseconds, status);
    }

    private static async Task WaitForPrewarmAsync(FaaSCacheHostProcess host, CancellationToken cancellation)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < PipelineTimeout)
        {
            HostStatus status = await host.GetStatusAsync(cancellation);
            if (status.Prewarm is { State: "done" or "failed" or "off" })
            {
                return;
            }

            await Task.Delay(50, cancellation);
        }

        throw new TimeoutException($"The Load Daemon was not done within {PipelineTimeout.TotalSeconds:0} s.{Environment.NewLine}{host.Output}");
    }

    private static void Report(BenchmarkContext context, Dictionary<string, List<double>> samples)
    {
        TextWriter output = context.Output;
        var rows = new List<string>();
        var median = new Dictionary<string, double>();
        output.WriteLine();
        output.WriteLine($"{"mode",-10} {"median ms",10} {"min ms",8} {"max ms",8} {"n",3}");
        foreach ((string mode, List<double> ms) in samples)
        {
            double[] sorted = [.. ms.Order()];
            double mid = sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
            median[mode] = mid;
            output.WriteLine($"{mode,-10} {mid,10:0} {sorted[0],8:0} {sorted[^1],8:0} {sorted.Length,3}");
            rows.Add(string.Create(Invariant, $"{mode},{mid:0.0},{sorted.Length}"));
        }

        output.WriteLine();
        output.WriteLine($"pre-warm vs histogram alone: {ReportFormat.Faster(median["prewarm"], median["histogram"])} faster (paper: 58%)");
        output.WriteLine($"pre-warm vs cold start:      {ReportFormat.Faster(median["prewarm"], median["cold"])} faster (paper: 74%)");
        // One file for every distance: this run's rows (storage_latency_ms = its distance) replace only their own.
        string path = DistanceCsv.Write(Path.Combine(context.ResultsDirectory, CsvFileName), CsvHeader, context.StorageLatencyMs, rows);
        output.WriteLine($"wrote {path} (storage_latency_ms {context.StorageLatencyMs:0.##})");
        string png = DistancePlot.Save(path, Path.ChangeExtension(path, ".png"), "First invocation after an unload (§3.3): cold start vs hybrid histogram alone vs FaaSCache pre-warm", "median (ms)");
        output.WriteLine($"wrote {png} (every storage distance in {CsvFileName})");
    }

    private static FunctionAppFolder CopySample(bool prewarm) =>
        BenchAppFolder.CopyDirectory(
            Path.Combine(RepositoryRoot.Find(), "samples", "amber-alert"),
            json => BenchAppFolder.SetFaaSCache(json, "prewarm", new JsonObject { ["enabled"] = prewarm, ["hitRateThreshold"] = 0.5 }),
            $"faascache-bench-prewarm-{(prewarm ? "on" : "off")}");

    /// <summary>The models as <c>samples/amber-alert/seed.sh</c> seeds them: random bytes of the paper's sizes.</summary>
    internal static async Task SeedAsync(IBlobStore storage, TextWriter output, CancellationToken cancellation)
    {
        foreach ((string name, int mib) in Models)
        {
            byte[] bytes = new byte[mib << 20];
            new Random(mib).NextBytes(bytes);
            string etag = await storage.UploadAsync($"models/{name}", new MemoryStream(bytes), cancellation);
            output.WriteLine($"seeded models/{name}: {ReportFormat.SizeLabel(bytes.Length)} ({etag})");
        }
    }

    /// <summary>A 320x240 camera image like seed.sh's: a dark street with bright shapes.</summary>
    internal static byte[] Ppm(int seed)
    {
        const int W = 320, H = 240;
        var rnd = new Random(seed);
        byte[] pixels = new byte[W * H * 3];
        for (int y = 0; y < H; y++)
        {
            for (int x = 0; x < W * 3; x++)
            {
                pixels[(y * W * 3) + x] = (byte)Math.Clamp(20 + (y * 40 / H) + rnd.Next(-8, 9), 0, 255);
            }
        }

        for (int shape = rnd.Next(2, 5); shape > 0; shape--)
        {
            (int w, int h) = rnd.NextDouble() < 0.5 ? (rnd.Next(16, 41), rnd.Next(48, 97)) : (rnd.Next(64, 121), rnd.Next(32, 57));
            int x0 = rnd.Next(0, W - w + 1), y0 = rnd.Next(0, H - h + 1);
            byte r = (byte)rnd.Next(150, 256), g = (byte)rnd.Next(150, 256), b = (byte)rnd.Next(150, 256);
            for (int y = y0; y < y0 + h; y++)
            {
                for (int x = x0; x < x0 + w; x++)
                {
                    int i = ((y * W) + x) * 3;
                    (pixels[i], pixels[i + 1], pixels[i + 2]) = (r, g, b);
                }
            }
        }

        return [.. Encoding.ASCII.GetBytes($"P6\n{W} {H}\n255\n"), .. pixels];
    }
}
