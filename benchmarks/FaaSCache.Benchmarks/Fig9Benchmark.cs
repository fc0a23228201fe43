namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>fig9</c>: the paper's Fig. 9, the AMBER Alert pipeline end to end (samples/amber-alert-v2: BoundingBox over HTTP
/// with its 35 MiB model, then People (97 MiB) and Car (5 MiB) on the labelled image), three ways:
/// <b>vanilla</b> (a host with <c>--cache off</c>: every model read from storage, inside the gRPC messages),
/// <b>lh</b> (one host, the models cached: local hits) and <b>rh</b> (two instances of one app: the requests go to the
/// instance that owns none of the models, whose copies are dropped before each request, so every model read is a
/// remote hit from the owner). The pipeline's latency is its critical path of executions from the host's own records:
/// BoundingBox's duration plus the longer of People's and Car's (binding the inputs included; the blob trigger's
/// dispatch, polling for vanilla and the cache write for the others, left out so the paths differ only in how the
/// models arrive). With <c>--storage-distance</c> the storage is that far (a link in front of Azurite).
/// </summary>
internal static class Fig9Benchmark
{
    public const string Name = "fig9";
    public const string CsvFileName = "fig9.csv";
    public const string CsvHeader = "path,p50_ms,n";

    private const string AppName = "amber-fig9";
    private static readonly Dictionary<string, string> PollFast = new() { ["--blob-poll-interval"] = "0.2" };
    private static readonly string[] Models = ["models/bounding-box.bin", "models/people.bin", "models/car.bin"];
    private static readonly string[] Paths = ["vanilla", "lh", "rh"];
    private static readonly TimeSpan PipelineTimeout = TimeSpan.FromMinutes(2);
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken ct = context.Cancellation;
        int repetitions = context.Quick ? 3 : 10;
        context.WriteHeader(Name);
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        var storage = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        await PrewarmBenchmark.SeedAsync(storage, output, ct);

        // Two instance ids whose ring gives every model to the owner, and images whose labelled copy the reader owns
        // (so the labelled write commits on the reader and People and Car run there: remote hits too).
        (string owner, string reader) = PickInstances();
        var ring = new ConsistentHashRing([owner, reader]);
        output.WriteLine($"rh: instance {owner} owns {string.Join(", ", Models)}; requests go to {reader}");

        // One copy of the app per path, its images and results in containers of their own (the models are shared): a
        // host's blob-trigger polling must not fire for another path's writes.
        using FunctionAppFolder vanillaApp = CopyApp("vanilla");
        using FunctionAppFolder lhApp = CopyApp("lh");
        using FunctionAppFolder rhApp = CopyApp("rh");
        string vanillaId = $"fig9-vanilla-{Guid.NewGuid():N}"[..20], lhId = $"fig9-lh-{Guid.NewGuid():N}"[..20];
        await using BenchInstance vanilla = await BenchInstance.StartAsync(vanillaApp, azurite, cache: false, vanillaId, $"{AppName}-{vanillaId}", membership: false, ct, PollFast);
        await using BenchInstance lh = await BenchInstance.StartAsync(lhApp, azurite, cache: true, lhId, $"{AppName}-{lhId}", membership: false, ct, PollFast);
        await using BenchInstance ownerHost = await BenchInstance.StartAsync(rhApp, azurite, cache: true, owner, AppName, membership: true, ct, PollFast);
        await using BenchInstance readerHost = await BenchInstance.StartAsync(rhApp, azurite, cache: true, reader, AppName, membership: true, ct, PollFast);
        await readerHost.WaitForMembersAsync(2, ct);
        await ownerHost.WaitForMembersAsync(2, ct);
        output.WriteLine($"hosts: vanilla {vanilla.Host.BaseUri}, lh {lh.Host.BaseUri}, rh owner {ownerHost.Host.BaseUri} and reader {readerHost.Host.BaseUri}");

        int image = 0;
        string NextImage(Func<string, bool> accept)
        {
            while (true)
            {
                string name = $"fig9-{++image}.ppm";
                if (accept(name))
                {
                    return name;
                }
            }
        }

        // Warm-up, untimed: each host runs the pipeline once (the cache-on ones then hold the models: for rh the owner,
        // with an image whose labelled copy it owns, so People and Car run there too).
        await RunPipelineAsync(vanilla, storage, "vanilla", NextImage(_ => true), ct);
        await RunPipelineAsync(lh, storage, "lh", NextImage(_ => true), ct);
        await RunPipelineAsync(ownerHost, storage, "rh", NextImage(n => ring.GetOwner($"labelled-rh/{n}") == owner), ct);

        var samples = Paths.ToDictionary(p => p, _ => new List<double>());
        for (int rep = 1; rep <= repetitions; rep++)
        {
            foreach (string path in Paths)
            {
                double ms;
                if (path == "rh")
                {
                    // The reader's own copies from the previous request go first: every model read is a remote hit.
                    foreach (string model in Models)
                    {
                        using HttpResponseMessage removed = await readerHost.Host.Http.PostAsync(new Uri(readerHost.Host.BaseUri, $"/admin/cache/remove?key={Uri.EscapeDataString(model)}"), null, ct);
                    }

                    ms = await RunPipelineAsync(readerHost, storage, "rh", NextImage(n => ring.GetOwner($"labelled-rh/{n}") == reader), ct, expectModels: "rh");
                }
                else
                {
                    ms = await RunPipelineAsync(path == "lh" ? lh : vanilla, storage, path, NextImage(_ => true), ct, expectModels: path == "lh" ? "lh" : "storage");
                }

                samples[path].Add(ms);
                output.WriteLine($"  rep {rep} {path,-7} {ms,8:0.0} ms");
            }
        }

        Report(context, samples);
    }

    /// <summary>One pipeline for a new image on <paramref name="instance"/>: its critical path of executions, in ms.</summary>
    private static async Task<double> RunPipelineAsync(BenchInstance instance, IBlobStore storage, string path, string image, CancellationToken ct, string? expectModels = null)
    {
        await storage.UploadAsync($"images-{path}/{image}", new MemoryStream(PrewarmBenchmark.Ppm(image.GetHashCode(StringComparison.Ordinal))), ct);
        FaaSCacheHostProcess host = instance.Host;
        using HttpResponseMessage response = await host.Http.PostAsync(new Uri(host.BaseUri, $"/api/bounding-box/{image}"), null, ct);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"BoundingBox answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync(ct)}{Environment.NewLine}{host.Output}");
        }

        var records = new Dictionary<string, InvocationRecord>();
        foreach (string function in new[] { "BoundingBox", "People", "Car" })
        {
            InvocationRecord done = (await host.WaitForInvocationsAsync(
                function, 1, PipelineTimeout, r => r.Status != "running" && r.Inputs.Any(i => i.Key.EndsWith(image, StringComparison.Ordinal)), ct))[0];
            if (done.Status != "succeeded")
            {
                throw new InvalidOperationException($"{function} {done.Status}: {done.Error}{Environment.NewLine}{host.Output}");
            }

            if (expectModels is not null && done.Inputs.FirstOrDefault(i => i.Key.StartsWith("models/", StringComparison.Ordinal)) is { } model && model.Source != expectModels)
            {
                throw new InvalidOperationException($"{function} on {instance.Id} read {model.Key} as '{model.Source}', not '{expectModels}': the path is not what its name says.");
            }

            records[function] = done;
        }

        return records["BoundingBox"].DurationMs + Math.Max(records["People"].DurationMs, records["Car"].DurationMs);
    }

    private static void Report(BenchmarkContext context, Dictionary<string, List<double>> samples)
    {
        TextWriter output = context.Output;
        var rows = new List<string>();
        var median = new Dictionary<string, double>();
        output.WriteLine();
        output.WriteLine($"AMBER Alert pipeline, critical path of executions (storage {(context.StorageDistance > TimeSpan.Zero ? $"{context.StorageLatencyMs:0.##} ms away" : "Azurite on loopback")})");
        output.WriteLine($"{"path",-8} {"p50 ms",9} {"min ms",8} {"max ms",8} {"n",3}");
        foreach ((string path, List<double> ms) in samples)
        {
            double[] sorted = [.. ms.Order()];
            double p50 = sorted[(sorted.Length - 1) / 2];
            median[path] = p50;
            output.WriteLine($"{path,-8} {p50,9:0.0} {sorted[0],8:0.0} {sorted[^1],8:0.0} {sorted.Length,3}");
            rows.Add(string.Create(Invariant, $"{path},{p50:0.0},{sorted.Length}"));
        }

        output.WriteLine();
        output.WriteLine($"lh faster than vanilla by {ReportFormat.Faster(median["lh"], median["vanilla"])} (paper, Fig. 9: 61%)");
        output.WriteLine($"rh faster than vanilla by {ReportFormat.Faster(median["rh"], median["vanilla"])}");
        string written = DistanceCsv.Write(Path.Combine(context.ResultsDirectory, CsvFileName), CsvHeader, context.StorageLatencyMs, rows);
        output.WriteLine($"wrote {written} (storage_latency_ms {context.StorageLatencyMs:0.##})");
        string png = DistancePlot.Save(written, Path.ChangeExtension(written, ".png"), "AMBER Alert pipeline, critical path (Fig. 9): vanilla vs local hit vs remote hit", "p50 (ms)");
        output.WriteLine($"wrote {png} (every storage distance in {CsvFileName})");
    }

    /// <summary>samples/amber-alert-v2 with its images, labelled images and results in containers of <paramref name="path"/>'s own.</summary>
    private static FunctionAppFolder CopyApp(string path)
    {
        FunctionAppFolder app = BenchAppFolder.CopyDirectory(Path.Combine(RepositoryRoot.Find(), "samples", "amber-alert-v2"), null, $"faascache-bench-fig9-{path}");
        string script = Path.Combine(app.Path, "function_app.py");
        string text = File.ReadAllText(script);
        foreach (string container in new[] { "images", "labelled", "people", "cars" })
        {
            text = text.Replace($"path=\"{container}/", $"path=\"{container}-{path}/", StringComparison.Ordinal);
        }

        File.WriteAllText(script, text);
        return app;
    }

    private static (string Owner, string Reader) PickInstances()
    {
        for (int n = 0; ; n++)
        {
            string owner = $"fig9-owner-{n}", reader = $"fig9-reader-{n}";
            var ring = new ConsistentHashRing([owner, reader]);
            if (Models.All(m => ring.GetOwner(m) == owner))
            {
                return (owner, reader);
            }
        }
    }
}
