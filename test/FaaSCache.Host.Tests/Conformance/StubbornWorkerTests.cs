namespace FaaSCache.Host.Tests.Conformance;

/// <summary>
/// The other side of the real Python worker's behaviour: a worker that keeps its output map open and answers
/// <c>false</c> when the host asks it to close it. The cache must not take over a map another process can still change,
/// so the host copies the bytes (the invocation succeeds, the output is stored) and deletes the map as soon as the
/// worker lets go of it. Played by worker_player.py with a conversation written here (it is not a real worker's).
/// </summary>
[Trait("Category", "Integration")]
public sealed class StubbornWorkerTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task An_output_map_the_worker_will_not_close_is_copied_and_deleted_once_the_worker_lets_go()
    {
        string conformance = Path.Combine(RepositoryRoot.Find(), "src", "Workers", "conformance", "real-workers");
        JsonObject real = JsonNode.Parse(await File.ReadAllTextAsync(Path.Combine(conformance, "conversations.json")))!["cases"]!.AsArray()
            .First(c => c!["app"]!.GetValue<string>() == "apps/python-v1")!.AsObject();
        JsonArray steps = real["steps"]!.AsArray();
        int close = steps.IndexOf(steps.First(s => s!["worker"]?["close_shared_memory_resources_response"] is not null));

        // Up to the host's close request as the real worker; then it answers false, keeps the map until the HTTP answer
        // came, closes it, and the map must go.
        var stubborn = new JsonArray(steps.Take(close - 1).Select(s => s!.DeepClone()).ToArray());
        stubborn.Add(JsonNode.Parse("""{"worker": {"close_shared_memory_resources_response": {"close_map_results": {"{{output}}": false}}}}"""));
        stubborn.Add(JsonNode.Parse("""{"http_done": {}}"""));
        stubborn.Add(JsonNode.Parse("""{"expect_map": {"name": "{{output}}", "exists": true}}"""));
        stubborn.Add(JsonNode.Parse("""{"worker_map": {"close": "output"}}"""));
        stubborn.Add(JsonNode.Parse("""{"wait_map_gone": {"name": "{{output}}", "seconds": 10}}"""));
        JsonObject @case = real.DeepClone().AsObject();
        @case["name"] = "stubborn";
        @case["steps"] = stubborn;

        using var workers = new TempFolder("faascache-stubborn-");
        string fixture = Path.Combine(workers.Path, "stubborn.json");
        await File.WriteAllTextAsync(fixture, new JsonObject { ["kind"] = "conversations", ["cases"] = new JsonArray(@case) }.ToJsonString());
        await using ConversationRun run = await ConversationRun.StartAsync(azurite, conformance, fixture, @case, workers.Path);

        JsonObject outcome = await run.WaitForResultAsync();

        Assert.True(outcome["ok"]!.GetValue<bool>(), $"{outcome["error"]}{Environment.NewLine}Host output:{Environment.NewLine}{run.Host.Output}");
        InvocationRecord record = Assert.Single(await run.Host.GetInvocationsAsync("BlobCopy"));
        OutputRecord output = Assert.Single(record.Outputs);
        Assert.Equal(("outputs/cat.txt", false, 10L), (output.Key, output.Adopted, output.BytesCopied));
        Assert.Equal("FAAST-BLOB", (await azurite.CreateServiceClient().GetBlobContainerClient("outputs").GetBlobClient("cat.txt").DownloadContentAsync()).Value.Content.ToString());
        Assert.Equal(0, await run.Host.StopAsync());
        Assert.Empty(Directory.GetFiles(run.MapDirectory));
    }
}
