namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// C# isolated apps built with the real Microsoft.Azure.Functions.Worker 2.52.0 and Worker.Sdk 2.1.0
/// (scripts/setup.d/dotnet-apps.sh builds them), run from their build output through the host: both HTTP styles, the
/// ASP.NET Core integration (samples/thumbnail-dotnet: the worker serves HTTP itself at its HttpUri and the host forwards
/// the request with x-ms-invocation-id) and the classic RpcHttp (benchmarks/apps/dotnet-isolated). The worker reads no
/// shared memory, so blob inputs come from the cache as bytes inside the message (counted as copied), never from storage
/// a second time; outputs go through the cache's write path and fire blob triggers from the cache write, once.
/// </summary>
[Trait("Category", "Integration")]
public sealed class DotnetIsolatedEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task Aspnet_integration_the_second_request_is_served_from_the_cache_and_each_thumbnail_write_fires_its_trigger_once()
    {
        string name = $"photo-{Guid.NewGuid():N}.ppm";
        byte[] photo = Ppm(64, 48);
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => DotnetBuildOutput.Link("samples", "thumbnail-dotnet"), extraArgs: SharedScenarios.PollEvery(0.5));
        await running.UploadAsync("photos", name, photo);

        foreach (int _ in new[] { 1, 2 })
        {
            JsonElement json = await running.GetJsonAsync($"api/thumbnail/{name}");
            Assert.Equal(photo.Length, json.GetProperty("photoBytes").GetInt32());
            Assert.Equal("8x6", json.GetProperty("thumbnailSize").GetString());
        }

        IReadOnlyList<InvocationRecord> thumbnails = await running.Host.GetInvocationsAsync("Thumbnail");
        InputRecord miss = thumbnails[0].Inputs.Single(i => i.Key == $"photos/{name}");
        InputRecord hit = thumbnails[1].Inputs.Single(i => i.Key == $"photos/{name}");
        Assert.Equal("lm", miss.Source);
        // Served from the cache, copied once into the message (no shared memory in the .NET worker).
        Assert.Equal(("lh", (long)photo.Length, (long)photo.Length, (string?)null), (hit.Source, hit.Bytes, hit.BytesCopied, hit.MapName));
        Assert.True(thumbnails[1].Outputs.Single(o => o.Key == $"thumbnails/{name}").Persisted);

        // Each request wrote the thumbnail once: each write fires the trigger once, from the cache write.
        IReadOnlyList<InvocationRecord> indexed = await running.Host.WaitForInvocationsAsync("IndexThumbnail", 2, SharedScenarios.TriggerTimeout);
        Assert.All(indexed, i => Assert.Equal(("cache", "succeeded"), (i.Trigger, i.Status)));
        using JsonDocument entry = JsonDocument.Parse(await running.DownloadAsync("thumbnail-index", $"{name}.json"));
        Assert.Equal($"thumbnails/{name}", entry.RootElement.GetProperty("thumbnail").GetString());
        await Task.Delay(TimeSpan.FromSeconds(1.5));
        Assert.Equal(2, (await running.Host.GetInvocationsAsync("IndexThumbnail")).Count);
    }

    [Fact]
    public async Task Sdk_type_inputs_a_stream_and_a_blob_client_get_model_binding_data_and_are_served_by_the_cache_through_the_sdk_endpoint()
    {
        string name = $"photo-{Guid.NewGuid():N}.ppm";
        byte[] photo = Ppm(64, 48);
        // An app name of its own: no other test's instance in its membership list (the key is this instance's).
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => DotnetBuildOutput.Link("samples", "thumbnail-dotnet"), extraArgs: new Dictionary<string, string> { ["--app-name"] = $"sdk-{Guid.NewGuid():N}"[..20] });
        await running.UploadAsync("photos", name, photo);

        foreach (int _ in new[] { 1, 2 })
        {
            JsonElement json = await running.GetJsonAsync($"api/photoinfo/{name}");
            Assert.Equal(photo.Length, json.GetProperty("streamBytes").GetInt64());
            Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(photo)), json.GetProperty("sha256").GetString());
            Assert.Equal(photo.Length, json.GetProperty("clientLength").GetInt64());
            Assert.StartsWith("http://127.0.0.1:", json.GetProperty("endpoint").GetString(), StringComparison.Ordinal);
            Assert.DoesNotContain(":10000", json.GetProperty("endpoint").GetString(), StringComparison.Ordinal);
        }

        // The host reads each SDK-type input into the cache (the record says how) and the worker's own read is a hit.
        IReadOnlyList<InvocationRecord> invocations = await running.Host.GetInvocationsAsync("PhotoInfo");
        Assert.Equal(["lm", "lh"], invocations[0].Inputs.Where(i => i.Key == $"photos/{name}").Select(i => i.Source));
        Assert.All(invocations[1].Inputs.Where(i => i.Key == $"photos/{name}"), i => Assert.Equal(("lh", 0L), (i.Source, i.BytesCopied)));
        IReadOnlyList<FaaSCache.Host.BlobEndpoint.SdkRequestRecord> requests = await running.SdkRequestsAsync($"photos/{name}");
        Assert.Contains(requests, r => r.Operation == "read" && r.Source is not null);
        Assert.All(requests.Where(r => r.Operation == "read"), r => Assert.Equal("lh", r.Source));
    }

    [Fact]
    public async Task Classic_RpcHttp_a_blob_input_is_a_miss_then_a_hit_with_the_bytes_in_the_message()
    {
        string name = $"input-{Guid.NewGuid():N}";
        byte[] blob = SharedScenarios.RandomBytes(3 * 1024 * 1024);
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => DotnetBuildOutput.Link("benchmarks", "apps", "dotnet-isolated"));
        await running.UploadAsync("bench", name, blob);

        foreach (int _ in new[] { 1, 2 })
        {
            JsonElement json = await running.GetJsonAsync($"api/touch/{name}");
            Assert.Equal((blob.Length, (int)blob[0], (int)blob[^1]), (json.GetProperty("length").GetInt32(), json.GetProperty("first").GetInt32(), json.GetProperty("last").GetInt32()));
        }

        IReadOnlyList<InvocationRecord> touches = await running.Host.GetInvocationsAsync("Touch");
        Assert.Equal(["lm", "lh"], touches.Select(t => t.Inputs.Single().Source));
        Assert.Equal(blob.Length, touches[1].Inputs.Single().BytesCopied);
        Assert.Equal("dotnet-isolated", Assert.Single((await running.Host.GetStatusAsync()).Workers).Language);
    }

    /// <summary>A binary PPM (P6) of <paramref name="width"/> x <paramref name="height"/> random pixels.</summary>
    private static byte[] Ppm(int width, int height)
    {
        byte[] header = Encoding.ASCII.GetBytes($"P6\n{width} {height}\n255\n");
        return [.. header, .. SharedScenarios.RandomBytes(width * height * 3)];
    }
}
