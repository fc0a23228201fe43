namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// What the Python and Node.js test apps share: per-test containers (a suffix, so tests on one Azurite never meet)
/// for the AMBER Alert shape, the start of their folder (host.json with strong consistency, the settings) and the
/// function.json of the two pipeline stages.
/// </summary>
internal abstract class PipelineApp(string runtime)
{
    /// <summary>Gets the suffix of this app's containers, new for each app.</summary>
    public string Suffix { get; } = Guid.NewGuid().ToString("N")[..10];

    /// <summary>Gets the app's FUNCTIONS_WORKER_RUNTIME, the language the host's status names its worker by.</summary>
    public string Runtime => runtime;

    /// <summary>Gets the property of <c>ReadModel</c>'s answer that is true when the blob input was bound as the language's stream or buffer.</summary>
    public abstract string InputBoundAs { get; }

    public string Models => $"models-{Suffix}";

    public string Results => $"results-{Suffix}";

    public string Labelled => $"labelled-{Suffix}";

    public string People => $"people-{Suffix}";

    public string Cars => $"cars-{Suffix}";

    /// <summary>Gets the container the timer of the apps in today's programming models writes <c>last.txt</c> to.</summary>
    public string Ticks => $"ticks-{Suffix}";

    /// <summary>Writes the app into a new temporary folder.</summary>
    public abstract FunctionAppFolder Build();

    /// <summary>A builder with host.json (strong, sync) and the app settings of <paramref name="runtime"/>.</summary>
    public static FunctionAppBuilder NewBuilder(string namePrefix, string runtime) => new FunctionAppBuilder { NamePrefix = namePrefix }
        .WithHostJson("""
            {
              "version": "2.0",
              "extensions": { "faasCache": { "consistency": "strong", "persist": "sync" } }
            }
            """)
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", runtime)
        .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true");

    /// <summary>The function.json of a pipeline stage: fired by a labelled image, reads its model, writes its detections.</summary>
    protected string StageFunctionJson(string stage, string outputContainer) => $$"""
        {
          "bindings": [
            { "type": "blobTrigger", "direction": "in", "name": "image", "path": "{{Labelled}}/{name}", "dataType": "binary" },
            { "type": "blob", "direction": "in", "name": "model", "path": "{{Models}}/{{stage}}.bin", "dataType": "binary" },
            { "type": "blob", "direction": "out", "name": "detections", "path": "{{outputContainer}}/{name}.json" }
          ]
        }
        """;
}

/// <summary>End-to-end scenarios every language runs the same way.</summary>
internal static class SharedScenarios
{
    public const int FiftyMegabytes = 50 * 1024 * 1024;
    public static readonly TimeSpan TriggerTimeout = TimeSpan.FromSeconds(15);

    /// <summary>
    /// On the host running <paramref name="app"/>, <c>ReadModel</c> twice on a 50 MB blob: a local miss, then a local hit
    /// on the same map that copies nothing, the input bound as the language's stream or buffer; each output is adopted
    /// from the worker's map and written through to storage (strong). Returns the host's status after.
    /// </summary>
    public static async Task<HostStatus> LocalMissThenZeroCopyLocalHitAsync(AzuriteFixture azurite, PipelineApp app)
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);
        byte[] model = RandomBytes(FiftyMegabytes);
        await running.UploadAsync(app.Models, "model.bin", model);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(model));

        foreach (int _ in new[] { 1, 2 })
        {
            JsonElement json = await running.GetJsonAsync("api/ReadModel?name=model.bin");
            Assert.Equal(FiftyMegabytes, json.GetProperty("bytes").GetInt32());
            Assert.Equal(sha256, json.GetProperty("sha256").GetString());
            Assert.True(json.GetProperty(app.InputBoundAs).GetBoolean(), $"the blob input was bound as the {app.Runtime} worker's {app.InputBoundAs}");
        }

        IReadOnlyList<InvocationRecord> invocations = await running.Host.GetInvocationsAsync("ReadModel");
        Assert.Equal(2, invocations.Count);
        Assert.All(invocations, i => Assert.Equal(("http", "succeeded"), (i.Trigger, i.Status)));
        // By blob, not by binding name: a Node.js v4 app's binding names are generated (blobInput<10 hex>).
        InputRecord miss = invocations[0].Inputs.Single(i => i.Key == $"{app.Models}/model.bin");
        InputRecord hit = invocations[1].Inputs.Single(i => i.Key == $"{app.Models}/model.bin");
        Assert.Equal(($"{app.Models}/model.bin", "lm", (long)FiftyMegabytes), (miss.Key, miss.Source, miss.Bytes));
        Assert.Equal(("lh", (long)FiftyMegabytes, 0L), (hit.Source, hit.Bytes, hit.BytesCopied));
        Assert.False(string.IsNullOrEmpty(miss.MapName));
        Assert.Equal(miss.MapName, hit.MapName);

        // Under strong consistency the output is written through to storage before the invocation ends.
        string expected = $"{FiftyMegabytes}:{sha256}";
        foreach (InvocationRecord invocation in invocations)
        {
            OutputRecord output = invocation.Outputs.Single(o => o.Key == $"{app.Results}/model.bin.txt");
            Assert.True(output.Adopted, "the worker's output map was adopted into the cache");
            Assert.True(output.Persisted, "the output reached storage (strong)");
            Assert.Equal(0, output.BytesCopied);
            Assert.Equal(expected.Length, output.Bytes);
        }

        Assert.Equal(expected, Encoding.UTF8.GetString(await running.DownloadAsync(app.Results, "model.bin.txt")));
        HostStatus status = await running.Host.GetStatusAsync();
        Assert.Equal("on", status.Cache);
        Assert.NotNull(status.Counters);
        Assert.True(status.Counters.LocalHits >= 1, $"local hits: {status.Counters.LocalHits}");
        Assert.True(status.Counters.LocalMisses >= 1, $"local misses: {status.Counters.LocalMisses}");
        Assert.Equal(app.Runtime, Assert.Single(status.Workers).Language);
        return status;
    }

    /// <summary>
    /// <c>Detect</c> writes <c>labelled/{name}</c> through the cache; <c>People</c> and <c>Cars</c> fire from that
    /// write (trigger kind <c>cache</c>) within seconds, write their detections, and never fire twice for it (the host
    /// running <paramref name="app"/> also polls storage every 0.5 s).
    /// </summary>
    public static async Task CacheWriteFiresBothStagesOnceAsync(AzuriteFixture azurite, PipelineApp app)
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, extraArgs: PollEvery(0.5));
        await running.UploadAsync(app.Models, "people.bin", RandomBytes(97 * 1024));
        await running.UploadAsync(app.Models, "cars.bin", RandomBytes(5 * 1024));

        using HttpResponseMessage response = await running.SendAsync(HttpMethod.Post, "api/Detect?name=frame-1.jpg", Encoding.UTF8.GetBytes("pixels"));
        Assert.True(response.StatusCode == HttpStatusCode.Accepted, $"{response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        InvocationRecord detect = Assert.Single(await running.Host.GetInvocationsAsync("Detect"));
        Assert.Single(detect.Outputs, o => o.Key == $"{app.Labelled}/frame-1.jpg");
        var sinceWrite = Stopwatch.StartNew();

        foreach ((string function, string stage, string container, int modelBytes) in new[] { ("People", "people", app.People, 97 * 1024), ("Cars", "cars", app.Cars, 5 * 1024) })
        {
            InvocationRecord fired = Assert.Single(await running.Host.WaitForInvocationsAsync(function, 1, TriggerTimeout));
            Assert.True(fired.Status == "succeeded", $"{function} {fired.Status}: {fired.Error}");
            Assert.Equal("cache", fired.Trigger);
            Assert.Single(fired.Inputs, i => i.Key == $"{app.Labelled}/frame-1.jpg");
            Assert.True(fired.Outputs.Single(o => o.Key == $"{container}/frame-1.jpg.json").Persisted);
            using JsonDocument detections = JsonDocument.Parse(await running.DownloadAsync(container, "frame-1.jpg.json"));
            Assert.Equal(stage, detections.RootElement.GetProperty("stage").GetString());
            Assert.Equal("boxes:pixels", detections.RootElement.GetProperty("image").GetString());
            Assert.Equal(modelBytes, detections.RootElement.GetProperty("model_bytes").GetInt32());
        }

        Assert.True(sinceWrite.Elapsed < TimeSpan.FromSeconds(10), $"the downstream stages took {sinceWrite.Elapsed.TotalSeconds:0.0} s");

        // The polls that follow (every 0.5 s) see the version the cache write already fired: nothing fires twice.
        await Task.Delay(TimeSpan.FromSeconds(2));
        Assert.Single(await running.Host.GetInvocationsAsync("People"));
        Assert.Single(await running.Host.GetInvocationsAsync("Cars"));
    }

    /// <summary>The timer <c>Tick</c> of <paramref name="app"/> (every second) fires twice and writes <c>last.txt</c>.</summary>
    public static async Task TimerFiresAsync(AzuriteFixture azurite, PipelineApp app)
    {
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);
        IReadOnlyList<InvocationRecord> ticks = await running.Host.WaitForInvocationsAsync("Tick", 2, TimeSpan.FromSeconds(20), r => r.Status == "succeeded");
        Assert.All(ticks, t => Assert.Equal("timer", t.Trigger));
        using JsonDocument last = JsonDocument.Parse(await running.DownloadAsync(app.Ticks, "last.txt"));
        Assert.Equal(JsonValueKind.False, last.RootElement.GetProperty("past_due").ValueKind);
    }

    public static Dictionary<string, string> PollEvery(double seconds) =>
        new() { ["--blob-poll-interval"] = seconds.ToString(CultureInfo.InvariantCulture) };

    public static byte[] RandomBytes(int length)
    {
        byte[] bytes = new byte[length];
        Random.Shared.NextBytes(bytes);
        return bytes;
    }
}
