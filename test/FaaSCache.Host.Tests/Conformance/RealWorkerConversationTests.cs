namespace FaaSCache.Host.Tests.Conformance;

/// <summary>
/// The real workers' conversations (src/Workers/conformance/real-workers/conversations.json: Python 4.34, Node.js 3.9,
/// .NET isolated 2.52, each step as that worker holds it with the Functions host) played against the built host: a
/// worker process (worker_player.py) sends what the real worker sends, including its shared-memory behaviour, and checks
/// that the host answers as the Functions host does. Then the invocation records and storage say what the cache did, and
/// after the host stops nothing is left in the shared-memory folder.
/// </summary>
[Trait("Category", "Integration")]
public sealed class RealWorkerConversationTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly string Conformance = Path.Combine(RepositoryRoot.Find(), "src", "Workers", "conformance", "real-workers");
    private static readonly string Fixture = Path.Combine(Conformance, "conversations.json");

    public static TheoryData<string> Cases()
    {
        var data = new TheoryData<string>();
        foreach (JsonNode? c in JsonNode.Parse(File.ReadAllText(Fixture))!["cases"]!.AsArray())
        {
            data.Add(c!["name"]!.GetValue<string>());
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task The_host_holds_the_conversation_the_real_worker_holds_with_the_Functions_host(string name)
    {
        JsonObject @case = JsonNode.Parse(await File.ReadAllTextAsync(Fixture))!["cases"]!.AsArray().Single(c => c!["name"]!.GetValue<string>() == name)!.AsObject();
        using var work = new TempFolder("faascache-conversation-workers-");
        await using ConversationRun run = await ConversationRun.StartAsync(azurite, Conformance, Fixture, @case, work.Path);

        JsonObject outcome = await run.WaitForResultAsync();

        Assert.True(outcome["ok"]!.GetValue<bool>(), $"{name}: {outcome["error"]}{Environment.NewLine}Host output:{Environment.NewLine}{run.Host.Output}");
        BlobServiceClient blobs = azurite.CreateServiceClient();
        foreach (JsonNode? check in @case["host_checks"]?["outputs"]?.AsArray() ?? [])
        {
            InvocationRecord record = (await run.Host.GetInvocationsAsync(check!["function"]!.GetValue<string>())).First(r => r.Status == "succeeded");
            string key = check["key"]!.GetValue<string>();
            OutputRecord output = record.Outputs.Single(o => o.Key == key);
            int slash = key.IndexOf('/', StringComparison.Ordinal);
            BinaryData stored = (await blobs.GetBlobContainerClient(key[..slash]).GetBlobClient(key[(slash + 1)..]).DownloadContentAsync()).Value.Content;
            Assert.Equal(check["utf8"]!.GetValue<string>(), Encoding.UTF8.GetString(stored.ToArray()));
            if (check["cached"] is JsonNode cached)
            {
                Assert.Equal(cached.GetValue<bool>(), output.Adopted);
            }

            if (check["bytes_copied"] is JsonNode copied)
            {
                Assert.Equal(copied.GetValue<long>(), output.BytesCopied);
            }
        }

        foreach (JsonNode? check in @case["host_checks"]?["inputs"]?.AsArray() ?? [])
        {
            InvocationRecord record = (await run.Host.GetInvocationsAsync(check!["function"]!.GetValue<string>())).First(r => r.Status == "succeeded");
            InputRecord input = record.Inputs.Single(i => i.Key == check["key"]!.GetValue<string>());
            Assert.Equal(check["bytes_copied"]!.GetValue<long>(), input.BytesCopied);
        }

        // Whatever the worker handed over, kept open or not, the host took over or deleted: nothing is left behind.
        Assert.Equal(0, await run.Host.StopAsync());
        Assert.Empty(Directory.Exists(run.MapDirectory) ? Directory.GetFiles(run.MapDirectory) : []);
    }
}
