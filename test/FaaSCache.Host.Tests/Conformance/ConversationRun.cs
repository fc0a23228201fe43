namespace FaaSCache.Host.Tests.Conformance;

/// <summary>
/// One conversation of a <c>conversations</c> fixture played against the built host: a copy of the case's app (with the
/// collection's Azurite in local.settings.json), worker_player.py as the case's runtime's worker (the workers folder's
/// <c>&lt;language&gt;/worker.config.json</c>, or the app's own for dotnet-isolated, as a C# build output brings it), the
/// case's blobs seeded, a private shared-memory root, and the host running. Dispose stops everything and removes it all.
/// </summary>
internal sealed class ConversationRun(TempFolder app, TempShmDirectory shm, string result, FaaSCacheHostProcess host) : IAsyncDisposable
{
    private static readonly string Player = Path.Combine(RepositoryRoot.Find(), "test", "FaaSCache.Host.Tests", "Conformance", "worker_player.py");
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(120);

    public FaaSCacheHostProcess Host => host;

    /// <summary>The folder the host's and the worker's maps live in.</summary>
    public string MapDirectory => Path.Combine(shm.Path, "AzureFunctions");

    public static async Task<ConversationRun> StartAsync(AzuriteFixture azurite, string conformance, string fixture, JsonObject @case, string workDirectory)
    {
        string name = @case["name"]!.GetValue<string>();
        string runtime = @case["runtime"]!.GetValue<string>();
        var app = new TempFolder("faascache-conversation-app-");
        var shm = new TempShmDirectory();
        try
        {
            Folders.Copy(Path.Combine(conformance, @case["app"]!.GetValue<string>()), app.Path, "node_modules");
            await File.WriteAllTextAsync(Path.Combine(app.Path, "local.settings.json"), JsonSerializer.Serialize(new
            {
                IsEncrypted = false,
                Values = new Dictionary<string, string> { ["FUNCTIONS_WORKER_RUNTIME"] = runtime, ["AzureWebJobsStorage"] = azurite.ConnectionString },
            }));
            string result = Path.Combine(workDirectory, "result.json");
            string httpBase = result + ".http";
            string configFolder = runtime == "dotnet-isolated" ? app.Path : Path.Combine(workDirectory, runtime);
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
                    workerArguments = new[] { "--conversation", fixture, "--case", name, "--result", result, "--app", app.Path, "--http-base-file", httpBase },
                },
            }));
            BlobServiceClient blobs = azurite.CreateServiceClient();
            foreach ((string key, JsonNode? content) in @case["blobs"]?.AsObject() ?? [])
            {
                int slash = key.IndexOf('/', StringComparison.Ordinal);
                BlobContainerClient container = blobs.GetBlobContainerClient(key[..slash]);
                await container.CreateIfNotExistsAsync();
                await container.GetBlobClient(key[(slash + 1)..]).UploadAsync(BinaryData.FromString(content!.GetValue<string>()), overwrite: true);
            }

            FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(
                app.Path, azurite.ConnectionString, shm.Path, extraArgs: new Dictionary<string, string> { ["--workers-dir"] = workDirectory, ["--membership"] = "off" });
            await File.WriteAllTextAsync(httpBase, host.BaseUri.ToString());
            return new ConversationRun(app, shm, result, host);
        }
        catch
        {
            shm.Dispose();
            app.Dispose();
            throw;
        }
    }

    /// <summary>The player's verdict: <c>{"ok": true}</c> or <c>{"ok": false, "error": ...}</c>.</summary>
    public async Task<JsonObject> WaitForResultAsync()
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!File.Exists(result))
        {
            if (Host.HasExited || clock.Elapsed > Timeout)
            {
                Assert.Fail($"The worker player wrote no result within {clock.Elapsed.TotalSeconds:0} s (host exited: {Host.HasExited}).{Environment.NewLine}Host output:{Environment.NewLine}{Host.Output}");
            }

            await Task.Delay(100);
        }

        return JsonNode.Parse(await File.ReadAllTextAsync(result))!.AsObject();
    }

    public async ValueTask DisposeAsync()
    {
        await Host.DisposeAsync();
        shm.Dispose();
        app.Dispose();
    }
}
