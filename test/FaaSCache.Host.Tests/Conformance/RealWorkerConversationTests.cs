using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Azure.Storage.Blobs;
using FaaSCache.Host.Invocation;
using FaaSCache.TestSupport;
using Xunit;

namespace FaaSCache.Host.Tests.Conformance;

/// <summary>
/// The real workers' conversations (src/Workers/conformance/real-workers/conversations.json: Python 4.34, Node.js 3.9,
/// .NET isolated 2.52, each step as that worker holds it with the Functions host) played against the built host: a
/// worker process (worker_player.py) sends what the real worker sends, including its shared-memory behaviour, and checks
/// that the host answers as the Functions host does. Then the invocation records and storage say what the cache did, and
/// after the host stops nothing is left in the shared-memory folder.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class RealWorkerConversationTests(AzuriteFixture azurite)
{
    private static readonly string Conformance = Path.Combine(RepositoryRoot.Find(), "src", "Workers", "conformance", "real-workers");
    private static readonly string Fixture = Path.Combine(Conformance, "conversations.json");
    private static readonly string Player = Path.Combine(RepositoryRoot.Find(), "test", "FaaSCache.Host.Tests", "Conformance", "worker_player.py");
    private static readonly TimeSpan ConversationTimeout = TimeSpan.FromSeconds(120);

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
        JsonObject @case = JsonNode.Parse(File.ReadAllText(Fixture))!["cases"]!.AsArray().Single(c => c!["name"]!.GetValue<string>() == name)!.AsObject();
        string runtime = @case["runtime"]!.GetValue<string>();
        using var app = new TempFolder("faascache-conversation-app-");
        using var workers = new TempFolder("faascache-conversation-workers-");
        using var shm = new TempShmDirectory();
        CopyDirectory(Path.Combine(Conformance, @case["app"]!.GetValue<string>()), app.Path);
        await File.WriteAllTextAsync(Path.Combine(app.Path, "local.settings.json"), JsonSerializer.Serialize(new
        {
            IsEncrypted = false,
            Values = new Dictionary<string, string> { ["FUNCTIONS_WORKER_RUNTIME"] = runtime, ["AzureWebJobsStorage"] = azurite.ConnectionString },
        }));
        string result = Path.Combine(workers.Path, "result.json");
        string httpBase = result + ".http";
        string configFolder = runtime == "dotnet-isolated" ? app.Path : Path.Combine(workers.Path, runtime);
        Directory.CreateDirectory(configFolder);
        await File.WriteAllTextAsync(Path.Combine(configFolder, "worker.config.json"), JsonSerializer.Serialize(new
        {
            description = new
            {
                language = runtime,
                extensions = runtime == "node" ? new[] { ".js" } : runtime == "python" ? new[] { ".py" } : new[] { ".dll" },
                defaultExecutablePath = "/usr/bin/python3",
                defaultWorkerPath = Player,
                workerIndexing = "true",
                workerArguments = new[] { "--conversation", Fixture, "--case", name, "--result", result, "--app", app.Path, "--http-base-file", httpBase },
            },
        }));
        BlobServiceClient blobs = azurite.CreateServiceClient();
        foreach ((string key, JsonNode? content) in @case["blobs"]?.AsObject() ?? [])
        {
            BlobContainerClient container = blobs.GetBlobContainerClient(key[..key.IndexOf('/', StringComparison.Ordinal)]);
            await container.CreateIfNotExistsAsync();
            await container.GetBlobClient(key[(key.IndexOf('/', StringComparison.Ordinal) + 1)..]).UploadAsync(BinaryData.FromString(content!.GetValue<string>()), overwrite: true);
        }

        string mapDirectory = Path.Combine(shm.Path, "AzureFunctions");
        await using (FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(
            app.Path, azurite.ConnectionString, shm.Path, extraArgs: new Dictionary<string, string> { ["--workers-dir"] = workers.Path, ["--membership"] = "off" }))
        {
            await File.WriteAllTextAsync(httpBase, host.BaseUri.ToString());
            JsonObject outcome = await WaitForResultAsync(result, host);
            Assert.True(outcome["ok"]!.GetValue<bool>(), $"{name}: {outcome["error"]}{Environment.NewLine}Host output:{Environment.NewLine}{host.Output}");

            foreach (JsonNode? check in @case["host_checks"]?["outputs"]?.AsArray() ?? [])
            {
                InvocationRecord record = (await host.GetInvocationsAsync(check!["function"]!.GetValue<string>())).First(r => r.Status == "succeeded");
                string key = check["key"]!.GetValue<string>();
                OutputRecord output = record.Outputs.Single(o => o.Key == key);
                Assert.Equal(check["utf8"]!.GetValue<string>(), Encoding.UTF8.GetString((await blobs.GetBlobContainerClient(key[..key.IndexOf('/', StringComparison.Ordinal)]).GetBlobClient(key[(key.IndexOf('/', StringComparison.Ordinal) + 1)..]).DownloadContentAsync()).Value.Content.ToArray()));
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
                InvocationRecord record = (await host.GetInvocationsAsync(check!["function"]!.GetValue<string>())).First(r => r.Status == "succeeded");
                InputRecord input = record.Inputs.Single(i => i.Key == check["key"]!.GetValue<string>());
                Assert.Equal(check["bytes_copied"]!.GetValue<long>(), input.BytesCopied);
            }

            Assert.Equal(0, await host.StopAsync());
        }

        // Whatever the worker handed over, kept open or not, the host took over or deleted: nothing is left behind.
        Assert.Empty(Directory.Exists(mapDirectory) ? Directory.GetFiles(mapDirectory) : []);
    }

    private static async Task<JsonObject> WaitForResultAsync(string result, FaaSCacheHostProcess host)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!File.Exists(result))
        {
            if (host.HasExited || clock.Elapsed > ConversationTimeout)
            {
                Assert.Fail($"The worker player wrote no result within {clock.Elapsed.TotalSeconds:0} s (host exited: {host.HasExited}).{Environment.NewLine}Host output:{Environment.NewLine}{host.Output}");
            }

            await Task.Delay(100);
        }

        return JsonNode.Parse(await File.ReadAllTextAsync(result))!.AsObject();
    }

    private static void CopyDirectory(string from, string to)
    {
        foreach (string dir in Directory.EnumerateDirectories(from, "*", SearchOption.AllDirectories).Where(d => !d.Contains("node_modules", StringComparison.Ordinal)))
        {
            Directory.CreateDirectory(Path.Combine(to, Path.GetRelativePath(from, dir)));
        }

        foreach (string file in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories).Where(f => !f.Contains("node_modules", StringComparison.Ordinal)))
        {
            File.Copy(file, Path.Combine(to, Path.GetRelativePath(from, file)), overwrite: true);
        }
    }
}
