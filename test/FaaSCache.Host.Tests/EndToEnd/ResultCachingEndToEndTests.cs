using System.Net.Http.Headers;
using FaaSCache.Diagnostics;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// Issue 37: result caching declared in host.json only, on the thumbnail sample (samples/thumbnail-node-v4,
/// ThumbnailOf: a PPM image in the body, its thumbnail in the answer, the factor from the blob settings/thumbnail.json),
/// with the real host, the real Node.js worker and real Azurite (and a real redis-server). The function counts its own
/// runs in the answer's <c>x-invocations</c> header: a cached answer carries the count of the run that made it.
/// </summary>
[Trait("Category", "Integration")]
public sealed class ResultCachingEndToEndTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private const string Function = "ThumbnailOf";

    [NodeWorkerFact]
    public async Task A_repeated_request_is_answered_without_running_the_function_and_a_changed_input_or_body_runs_it()
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Sample(location: "local"));
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 8}"u8.ToArray());
        byte[] image = Ppm(120, seed: 1);

        (string first, byte[] made) = await PostAsync(running.Host, image);
        (string second, byte[] kept) = await PostAsync(running.Host, image);
        Assert.Equal("1", first);
        Assert.Equal("1", second); // the worker did not run again
        Assert.Equal(made, kept);
        Assert.Equal("miss,hit", await ResultsAsync(running.Host, 2));

        (string other, _) = await PostAsync(running.Host, Ppm(120, seed: 2));
        Assert.Equal("2", other);

        // A new version of the blob input is a different key: the function runs, with the new factor.
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 4}"u8.ToArray());
        (string changed, byte[] larger) = await PostAsync(running.Host, image);
        Assert.Equal("3", changed);
        Assert.True(larger.Length > made.Length, "a factor of 4 makes a larger thumbnail than 8");
        Assert.Equal("miss,miss", await ResultsAsync(running.Host, 2));
    }

    [NodeWorkerFact]
    public async Task Concurrent_identical_requests_run_the_function_once_and_the_others_get_its_answer()
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Sample(location: "local"));
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 8}"u8.ToArray());
        // A large image: its run takes long enough for every request to arrive while it runs.
        byte[] image = Ppm(1024, seed: 8);

        (string Invocations, byte[] Body)[] answers = await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => PostAsync(running.Host, image)));

        Assert.All(answers, a => Assert.Equal("1", a.Invocations));
        Assert.All(answers, a => Assert.Equal(answers[0].Body, a.Body));
        string[] results = [.. (await running.Host.GetInvocationsAsync(Function)).Select(r => r.Result ?? "none")];
        Assert.Equal((1, 7), (results.Count(r => r == "miss"), results.Count(r => r == "hit")));
    }

    [NodeWorkerFact]
    public async Task A_result_past_its_ttl_is_not_used()
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Sample(location: "local", ttl: "00:00:01"));
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 8}"u8.ToArray());
        byte[] image = Ppm(64, seed: 3);

        (string first, _) = await PostAsync(running.Host, image);
        await Task.Delay(TimeSpan.FromSeconds(2));
        (string second, _) = await PostAsync(running.Host, image);

        Assert.Equal(("1", "2"), (first, second));
        Assert.Equal("miss,miss", await ResultsAsync(running.Host, 2));
    }

    [NodeWorkerFact]
    public async Task Results_in_redis_are_shared_and_a_redis_that_stops_answering_degrades_to_running_the_function()
    {
        await using RedisServer redis = await RedisServer.StartAsync();
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Sample(location: "redis", redis: redis.Endpoint));
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 8}"u8.ToArray());
        byte[] image = Ppm(80, seed: 4);

        (string first, _) = await PostAsync(running.Host, image);
        (string second, _) = await PostAsync(running.Host, image);
        Assert.Equal(("1", "1"), (first, second));
        InvocationRecord hit = (await running.Host.GetInvocationsAsync(Function)).OrderBy(r => r.StartedAt).Last();
        Assert.Equal(("hit", "redis"), (hit.Result, hit.ResultFrom));

        await redis.DisposeAsync();
        (string third, _) = await PostAsync(running.Host, image);
        Assert.Equal("2", third);
        Assert.Contains("Redis", running.Host.Output, StringComparison.Ordinal);
    }

    [NodeWorkerFact]
    public async Task A_cluster_result_made_on_one_instance_answers_the_same_request_on_the_other()
    {
        using FunctionAppFolder app = Sample(location: "cluster");
        string appName = $"results-{Guid.NewGuid():N}"[..20];
        await using HostProcessCluster cluster = await HostProcessCluster.StartAsync(app.Path, azurite.ConnectionString, appName, 2, output.WriteLine);
        await azurite.CreateServiceClient().GetBlobContainerClient("settings").CreateIfNotExistsAsync();
        await azurite.CreateServiceClient().GetBlobContainerClient("settings").GetBlobClient("thumbnail.json").UploadAsync(new BinaryData("{\"factor\": 8}"u8.ToArray()), overwrite: true);
        byte[] image = Ppm(96, seed: 5);

        (string made, byte[] body) = await PostAsync(cluster[0].Host, image);
        (string kept, byte[] fromOwner) = await PostAsync(cluster[1].Host, image);

        Assert.Equal(("1", "1"), (made, kept)); // instance 1's worker never ran it: the answer is instance 0's run
        Assert.Equal(body, fromOwner);
        InvocationRecord hit = (await cluster[1].Host.GetInvocationsAsync(Function)).Single();
        Assert.Equal("hit", hit.Result);
        Assert.StartsWith("cluster", hit.ResultFrom, StringComparison.Ordinal);
    }

    [NodeWorkerFact]
    public async Task A_function_that_cannot_be_cached_as_configured_is_named_at_start_and_runs_every_time()
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Sample(location: "local", functions: new JsonObject
        {
            ["NoSuchFunction"] = new JsonObject(),
            ["Thumbnail"] = new JsonObject { ["key"] = new JsonArray("route:name") },
            [Function] = new JsonObject { ["key"] = new JsonArray("route:missing") },
        }));
        await running.UploadAsync("settings", "thumbnail.json", "{\"factor\": 8}"u8.ToArray());

        (string first, _) = await PostAsync(running.Host, Ppm(32, seed: 6));
        (string second, _) = await PostAsync(running.Host, Ppm(32, seed: 6));

        Assert.Equal(("1", "2"), (first, second));
        string log = running.Host.Output;
        Assert.Contains("'extensions:faasCache:results:functions:NoSuchFunction' names no function of this app", log, StringComparison.Ordinal);
        Assert.Contains("output binding(s)", log, StringComparison.Ordinal);
        Assert.Contains("skipOutputs", log, StringComparison.Ordinal);
        Assert.Contains("'route:missing' is not a parameter", log, StringComparison.Ordinal);
    }

    [Fact]
    public Task Python_v1_ReadModel_is_answered_from_its_result() => EveryModelAsync(new PythonApp());

    [Fact]
    public Task Python_v2_ReadModel_is_answered_from_its_result() => EveryModelAsync(new PythonV2App());

    [NodeWorkerFact]
    public Task Node_v3_ReadModel_is_answered_from_its_result() => EveryModelAsync(new NodeApp());

    [NodeV4Fact]
    public Task Node_v4_ReadModel_is_answered_from_its_result() => EveryModelAsync(new NodeV4App());

    /// <summary>
    /// The same test app in each model (ReadModel: an HTTP GET reads models/{name} and writes results/{name}.txt), its
    /// results keyed on the query's name with its output skipped on a hit: the second request is a hit that writes
    /// nothing, and a new version of the model runs the function again.
    /// </summary>
    private async Task EveryModelAsync(PipelineApp app)
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, () =>
        {
            FunctionAppFolder folder = app.Build();
            JsonObject host = JsonNode.Parse(File.ReadAllText(folder.HostJsonPath))!.AsObject();
            host["extensions"]!["faasCache"]!["results"] = new JsonObject
            {
                ["functions"] = new JsonObject { ["ReadModel"] = new JsonObject { ["key"] = new JsonArray("query:name"), ["skipOutputs"] = true } },
            };
            File.WriteAllText(folder.HostJsonPath, host.ToJsonString());
            return folder;
        });
        await running.UploadAsync(app.Models, "m.bin", [1, 2, 3]);

        JsonElement first = await running.GetJsonAsync("api/ReadModel?name=m.bin");
        JsonElement second = await running.GetJsonAsync("api/ReadModel?name=m.bin");
        await running.UploadAsync(app.Models, "m.bin", [1, 2, 3, 4]);
        JsonElement third = await running.GetJsonAsync("api/ReadModel?name=m.bin");

        Assert.Equal(first.GetRawText(), second.GetRawText());
        Assert.Equal((3, 4), (second.GetProperty("bytes").GetInt32(), third.GetProperty("bytes").GetInt32()));
        InvocationRecord[] records = [.. (await running.Host.GetInvocationsAsync("ReadModel")).OrderBy(r => r.StartedAt)];
        Assert.Equal("miss,hit,miss", string.Join(",", records.Select(r => r.Result)));
        Assert.Equal((1, 0, 1), (records[0].Outputs.Count, records[1].Outputs.Count, records[2].Outputs.Count));
    }

    /// <summary>The sample with its host.json's <c>results</c> replaced.</summary>
    private static FunctionAppFolder Sample(string location, string ttl = "00:10:00", string? redis = null, JsonObject? functions = null)
    {
        string source = Path.Combine(RepositoryRoot.Find(), "samples", "thumbnail-node-v4");
        var builder = new FunctionAppBuilder { NamePrefix = "faascache-results" }.WithSymbolicLink("node_modules", Path.Combine(source, "node_modules"));
        foreach (string file in Directory.EnumerateFiles(source, "*", SearchOption.AllDirectories))
        {
            string relative = Path.GetRelativePath(source, file);
            if (relative.Split(Path.DirectorySeparatorChar).Contains("node_modules"))
            {
                continue;
            }

            if (relative == "host.json")
            {
                JsonObject host = JsonNode.Parse(File.ReadAllText(file))!.AsObject();
                host["extensions"]!["faasCache"]!["results"] = new JsonObject
                {
                    ["location"] = location,
                    ["redis"] = redis,
                    ["functions"] = functions ?? new JsonObject { [Function] = new JsonObject { ["key"] = new JsonArray("body"), ["ttl"] = ttl } },
                };
                builder.WithHostJson(host.ToJsonString());
            }
            else if (relative == "local.settings.json")
            {
                builder.WithLocalSettingsJson(File.ReadAllText(file));
            }
            else
            {
                builder.WithFile(relative, File.ReadAllText(file));
            }
        }

        return builder.Build();
    }

    private static async Task<(string Invocations, byte[] Body)> PostAsync(FaaSCacheHostProcess host, byte[] image)
    {
        using var content = new ByteArrayContent(image);
        content.Headers.ContentType = new MediaTypeHeaderValue("image/x-portable-pixmap");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        using HttpResponseMessage response = await host.Http.PostAsync("api/thumbnail-of", content, timeout.Token);
        byte[] body = await response.Content.ReadAsByteArrayAsync(timeout.Token);
        Assert.True(response.IsSuccessStatusCode, $"{(int)response.StatusCode}: {System.Text.Encoding.UTF8.GetString(body)}\n{host.Output}");
        return (response.Headers.GetValues("x-invocations").Single(), body);
    }

    private static async Task<string> ResultsAsync(FaaSCacheHostProcess host, int last) =>
        string.Join(",", (await host.GetInvocationsAsync(Function)).OrderBy(r => r.StartedAt).TakeLast(last).Select(r => r.Result ?? "none"));

    /// <summary>A binary PPM image of <paramref name="side"/> x <paramref name="side"/> pixels.</summary>
    private static byte[] Ppm(int side, int seed)
    {
        byte[] header = System.Text.Encoding.ASCII.GetBytes($"P6\n{side} {side}\n255\n");
        byte[] pixels = new byte[side * side * 3];
        new Random(seed).NextBytes(pixels);
        return [.. header, .. pixels];
    }
}
