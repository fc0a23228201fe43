using System.Diagnostics;
using System.Net.Http.Headers;
using System.Text.Json.Nodes;
using FaaSCache.Diagnostics;
using FaaSCache.Storage;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>results</c>: Rosa, Freitas and Simão's evaluation of result caching, on samples/thumbnail-node-v4's ThumbnailOf
/// (a PPM image in the request body, its area-averaged thumbnail in the answer), declared in host.json only. For the
/// paper's three image sizes (18,617, 228,902 and 4,106,938 bytes), the time from sending the request to the whole
/// answer: <c>no_cache</c> (the function runs every time), and a hit from each location: <c>local</c> (this instance),
/// <c>cluster</c> (the key's owner is the other of two instances), <c>redis</c> (a redis-server on this machine). Then
/// the paper's saturation run: 750 requests from 5 client threads carrying the medium image, per location.
/// </summary>
internal static class ResultsBenchmark
{
    public const string Name = "results";
    public const string CsvFileName = "results.csv";
    public const string LoadCsvFileName = "results-load.csv";

    private const string Function = "ThumbnailOf";
    private static readonly long[] Sizes = [18_617, 228_902, 4_106_938];
    private static readonly string[] Locations = ["no_cache", "local", "cluster", "redis"];

    // Rosa et al., Tables I-III (averages, ms): no cache, in process, Redis on the same VM, Redis over the network.
    private static readonly Dictionary<long, double[]> Paper = new()
    {
        [18_617] = [36.796, 0.158, 0.626, 27.781],
        [228_902] = [46.404, 0.160, 0.648, 25.267],
        [4_106_938] = [351.306, 0.222, 1.694, 25.158],
    };

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken ct = context.Cancellation;
        int n = context.Quick ? 20 : 100;
        int loadRequests = context.Quick ? 150 : 750;
        context.WriteHeader(Name);
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        await using RedisServer redis = await RedisServer.StartAsync(ct);
        output.WriteLine($"redis-server pid {redis.ProcessId} on {redis.Endpoint}");
        var storage = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        await storage.UploadAsync("settings/thumbnail.json", new MemoryStream("{\"factor\": 8}"u8.ToArray()), ct);

        var rows = new List<string>();
        var load = new List<string>();
        var p50 = new Dictionary<(long, string), double>();
        var hostP50 = new Dictionary<(long, string), double>();
        foreach (string location in Locations)
        {
            await using Rig rig = await Rig.StartAsync(location, azurite, redis, ct);
            output.WriteLine($"{location}: {rig.Describe()}");
            foreach (long size in Sizes)
            {
                byte[] image = Image(size, seed: (int)size);
                // The first request runs the function (a miss that keeps the result); the timed ones are hits.
                BenchInstance reader = await rig.ReaderForAsync(image, ct);
                var samples = new LatencySamples(n);
                for (int i = 0; i < n; i++)
                {
                    long started = Stopwatch.GetTimestamp();
                    await rig.PostAsync(reader, image, ct);
                    samples.Add(Stopwatch.GetTimestamp() - started);
                }

                InvocationRecord[] records = await rig.ExpectAsync(reader, n, location == "no_cache" ? null : "hit", ct);

                // The host's own time for each: the run, or for a hit the key (hashing the body, reading the input
                // versions) and the lookup: what the paper's cached columns time.
                double host = LatencySamples.NearestRank([.. records.Select(r => r.DurationMs)], 50);
                double median = samples.PercentileMilliseconds(50), p99 = samples.PercentileMilliseconds(99);
                p50[(size, location)] = median;
                hostP50[(size, location)] = host;
                rows.Add(FormattableString.Invariant($"{size},{location},{median:0.###},{p99:0.###},{n}"));
                output.WriteLine(FormattableString.Invariant($"  {size,9:N0} B {location,-9} p50 {median,9:0.###} ms  p99 {p99,9:0.###} ms  n={n}   in the host: p50 {host:0.###} ms"));
            }

            // Saturation: the medium image from 5 threads, every request after the first a hit (no_cache: every one runs).
            byte[] medium = Image(Sizes[1], seed: 7);
            BenchInstance target = await rig.ReaderForAsync(medium, ct);
            int errors = 0, next = 0;
            long began = Stopwatch.GetTimestamp();
            await Task.WhenAll(Enumerable.Range(0, 5).Select(_ => Task.Run(
                async () =>
                {
                    while (Interlocked.Increment(ref next) <= loadRequests)
                    {
                        try
                        {
                            await rig.PostAsync(target, medium, ct);
                        }
                        catch (Exception e) when (e is HttpRequestException or InvalidOperationException or TaskCanceledException)
                        {
                            Interlocked.Increment(ref errors);
                        }
                    }
                },
                ct)));
            double seconds = Stopwatch.GetElapsedTime(began).TotalSeconds;
            load.Add(FormattableString.Invariant($"{location},{loadRequests},{seconds:0.###},{loadRequests / seconds:0.#},{errors}"));
            output.WriteLine(FormattableString.Invariant($"  load: {loadRequests} requests of {Sizes[1]:N0} B from 5 threads in {seconds:0.00} s: {loadRequests / seconds:0.#} requests/s, {errors} errors"));
        }

        output.WriteLine();
        output.WriteLine("size          no_cache     local   cluster     redis   hit/no_cache (local, cluster, redis)   paper (in process, same-VM Redis, network Redis)");
        foreach (long size in Sizes)
        {
            double none = p50[(size, "no_cache")];
            double[] paper = Paper[size];
            double local = p50[(size, "local")], cluster = p50[(size, "cluster")], redisHit = p50[(size, "redis")];
            output.WriteLine(string.Create(
                System.Globalization.CultureInfo.InvariantCulture,
                $"{size,9:N0} B {none,8:0.##} {local,9:0.##} {cluster,9:0.##} {redisHit,9:0.##}   {local / none,6:0.000} {cluster / none,6:0.000} {redisHit / none,6:0.000}                 {paper[1] / paper[0],6:0.000} {paper[2] / paper[0],6:0.000} {paper[3] / paper[0],6:0.000}"));
        }

        output.WriteLine("(request sent to whole answer received, over HTTP through the host; the paper's cached columns time only the lookup:");
        output.WriteLine(" in the host, the run or the key and lookup, p50 ms:)");
        foreach (long size in Sizes)
        {
            output.WriteLine(string.Create(
                System.Globalization.CultureInfo.InvariantCulture,
                $"{size,9:N0} B  no_cache {hostP50[(size, "no_cache")],8:0.###}  local {hostP50[(size, "local")],7:0.###}  cluster {hostP50[(size, "cluster")],7:0.###}  redis {hostP50[(size, "redis")],7:0.###}   paper: {Paper[size][0]:0.###} / {Paper[size][1]:0.###} / {Paper[size][2]:0.###} / {Paper[size][3]:0.###}"));
        }

        output.WriteLine($"wrote {ResultsCsv.Write(context.ResultsDirectory, CsvFileName, "size_bytes,location,p50_ms,p99_ms,n", rows)}");
        output.WriteLine($"wrote {ResultsCsv.Write(context.ResultsDirectory, LoadCsvFileName, "location,requests,seconds,throughput_rps,errors", load)}");
    }

    /// <summary>A binary PPM of exactly <paramref name="size"/> bytes (a comment pads the header): a gradient with blocks.</summary>
    internal static byte[] Image(long size, int seed)
    {
        int side = (int)Math.Floor(Math.Sqrt((size - 64) / 3.0));
        string header = $"P6\n{side} {side}\n255\n";
        int pad = (int)(size - header.Length - (3L * side * side));
        string comment = pad >= 3 ? "# " + new string('x', pad - 3) + "\n" : string.Empty;
        header = $"P6\n{comment}{side} {side}\n255\n";
        var rnd = new Random(seed);
        byte[] bytes = new byte[header.Length + (3L * side * side)];
        System.Text.Encoding.ASCII.GetBytes(header, bytes);
        int at = header.Length;
        for (int y = 0; y < side; y++)
        {
            for (int x = 0; x < side; x++)
            {
                bytes[at++] = (byte)(x * 255 / side);
                bytes[at++] = (byte)(y * 255 / side);
                bytes[at++] = (byte)rnd.Next(256);
            }
        }

        return bytes;
    }

    /// <summary>The host(s) of one location: one instance, or two of one app for <c>cluster</c>.</summary>
    private sealed class Rig(string location, FunctionAppFolder app, BenchInstance[] instances) : IAsyncDisposable
    {
        public static async Task<Rig> StartAsync(string location, AzuriteServer azurite, RedisServer redis, CancellationToken ct)
        {
            FunctionAppFolder app = BenchAppFolder.CopyDirectory(
                Path.Combine(RepositoryRoot.Find(), "samples", "thumbnail-node-v4"),
                hostJson => BenchAppFolder.SetFaaSCache(hostJson, "results", location == "no_cache"
                    ? new JsonObject()
                    : new JsonObject
                    {
                        ["location"] = location,
                        ["redis"] = location == "redis" ? redis.Endpoint : null,
                        ["functions"] = new JsonObject { [Function] = new JsonObject { ["key"] = new JsonArray("body"), ["ttl"] = "01:00:00", ["maxBytes"] = 4_194_304 } },
                    }),
                $"faascache-bench-results-{location}");
            string appName = $"results-{location}-{Guid.NewGuid():N}"[..24];
            int count = location == "cluster" ? 2 : 1;
            var instances = new BenchInstance[count];
            for (int i = 0; i < count; i++)
            {
                instances[i] = await BenchInstance.StartAsync(app, azurite, cache: true, $"{appName}-{i + 1}", appName, membership: count > 1, ct);
            }

            foreach (BenchInstance instance in instances.Where(_ => count > 1))
            {
                await instance.WaitForMembersAsync(count, ct);
            }

            return new Rig(location, app, instances);
        }

        public string Describe() => string.Join(", ", instances.Select(i => $"{i.Id} at {i.Host.BaseUri}"));

        /// <summary>
        /// Runs the function once for <paramref name="image"/> (the miss that keeps its result) and returns the instance
        /// the timed requests go to: for <c>cluster</c>, the one that does not own the result (its hits come from the owner).
        /// </summary>
        public async Task<BenchInstance> ReaderForAsync(byte[] image, CancellationToken ct)
        {
            await PostAsync(instances[0], image, ct);
            await ExpectAsync(instances[0], 1, location == "no_cache" ? null : "miss", ct);
            if (location != "cluster")
            {
                return instances[0];
            }

            InvocationRecord last = (await instances[0].Host.GetInvocationsAsync(Function, ct)).OrderBy(r => r.StartedAt).Last();
            return last.ResultFrom?.Contains("this instance owns it", StringComparison.Ordinal) == true ? instances[1] : instances[0];
        }

        /// <summary>One request, its answer read to the end.</summary>
        public async Task PostAsync(BenchInstance instance, byte[] image, CancellationToken ct)
        {
            using var content = new ByteArrayContent(image);
            content.Headers.ContentType = new MediaTypeHeaderValue("image/x-portable-pixmap");
            using HttpResponseMessage response = await instance.Host.Http.PostAsync(new Uri(instance.Host.BaseUri, "/api/thumbnail-of"), content, ct);
            byte[] body = await response.Content.ReadAsByteArrayAsync(ct);
            if (!response.IsSuccessStatusCode || body.Length < 16)
            {
                throw new InvalidOperationException($"{Function} answered {(int)response.StatusCode} ({body.Length} bytes) on {instance.Id}");
            }
        }

        /// <summary>Checks the host's records of the last <paramref name="count"/> requests: each a result <paramref name="expect"/> (hit, miss; null: not cached).</summary>
        public async Task<InvocationRecord[]> ExpectAsync(BenchInstance instance, int count, string? expect, CancellationToken ct)
        {
            InvocationRecord[] last = [.. (await instance.Host.GetInvocationsAsync(Function, ct)).OrderBy(r => r.StartedAt).TakeLast(count)];
            if (last.Length < count || last.Any(r => r.Result != expect))
            {
                throw new InvalidOperationException(
                    $"{Function} on {instance.Id}: expected {count} result(s) '{expect ?? "none"}', the host recorded {string.Join(", ", last.Select(r => $"'{r.Result ?? "none"}' ({r.ResultFrom})"))}.");
            }

            return last;
        }

        public async ValueTask DisposeAsync()
        {
            foreach (BenchInstance instance in instances)
            {
                await instance.DisposeAsync();
            }

            app.Dispose();
        }
    }
}
