namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// The installed <c>faascache</c> .NET tool (scripts/setup.d/faascache-tool.sh: packed with PackAsTool and installed
/// with <c>dotnet tool install --tool-path .artifacts/bin</c>) runs an app from inside its folder, as Core Tools'
/// <c>func start</c> does: <c>faascache start --port P</c> with the app folder as the working directory and nothing else.
/// The host runs inside the tool and finds the language workers the package carries beside <c>faascache.dll</c>.
/// </summary>
[Trait("Category", "Integration")]
public sealed class FaaSCacheToolStartTests(AzuriteFixture azurite) : AzuriteTests
{
    [InstalledToolFact]
    public async Task Faascache_start_in_a_Python_v2_app_folder_runs_it_and_answers_a_request()
    {
        using var app = new TempFolder("faascache-tool-amber-");
        Folders.Copy(Path.Combine(RepositoryRoot.Find(), "samples", "amber-alert-v2"), app.Path, "__pycache__", "bin", "obj");
        // Small models and one small camera image: BoundingBox reads images/{image} and models/bounding-box.bin; the
        // labelled image it writes fires People and Car, which read their models too.
        BlobServiceClient blobs = azurite.CreateServiceClient();
        foreach (string model in new[] { "bounding-box.bin", "people.bin", "car.bin" })
        {
            await UploadIfMissingAsync(blobs, "models", model, RandomBytes(64 * 1024, seed: model.Length));
        }

        string image = $"tool-{Guid.NewGuid():N}.ppm";
        await UploadAsync(blobs, "images", image, Ppm(64, 48));

        await using ToolRun tool = await ToolRun.StartAsync(app.Path, azurite.ConnectionString, TimeSpan.FromSeconds(90));
        Assert.Equal("python", Assert.Single(tool.Status.Workers).Language);
        Assert.Equal(Path.GetFileName(app.Path), tool.Status.App);

        using HttpResponseMessage response = await tool.Http.GetAsync($"api/bounding-box/{image}");
        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET api/bounding-box/{image}: {(int)response.StatusCode} {body}{Environment.NewLine}{tool.Output}");
        using JsonDocument answer = JsonDocument.Parse(body);
        Assert.Equal(image, answer.RootElement.GetProperty("image").GetString());
        Assert.Equal("64x48", answer.RootElement.GetProperty("size").GetString());
        Assert.Equal($"labelled/{image}", answer.RootElement.GetProperty("labelled").GetString());

        Assert.Equal(0, await tool.StopAsync());
    }

    /// <summary>
    /// A C# isolated project folder: the tool builds it (<c>dotnet build -c Release</c>) and runs the host on the build
    /// output, whose worker.config.json starts the app's own worker (<c>dotnet thumbnail-dotnet.dll</c>). It runs in
    /// samples/thumbnail-dotnet itself, not a copy: the project takes its package versions from the repository's
    /// Directory.Packages.props.
    /// </summary>
    [InstalledToolFact]
    public async Task Faascache_start_in_a_CSharp_isolated_project_folder_builds_it_and_runs_its_output()
    {
        string sample = Path.Combine(RepositoryRoot.Find(), "samples", "thumbnail-dotnet");
        BlobServiceClient blobs = azurite.CreateServiceClient();
        string name = $"tool-{Guid.NewGuid():N}.ppm";
        await UploadAsync(blobs, "photos", name, Ppm(80, 64));

        // The build (the Worker.Sdk's inner extensions build included) may take a minute on a busy 2-core machine.
        await using ToolRun tool = await ToolRun.StartAsync(sample, azurite.ConnectionString, TimeSpan.FromMinutes(5));
        Assert.Contains("[faascache] dotnet build", tool.Output, StringComparison.Ordinal);
        Assert.Equal("dotnet-isolated", Assert.Single(tool.Status.Workers).Language);
        Assert.Equal("thumbnail-dotnet", tool.Status.App);
        Assert.Equal(["IndexThumbnail", "PhotoInfo", "Thumbnail"], tool.Status.Functions.Order(StringComparer.Ordinal));

        using HttpResponseMessage response = await tool.Http.GetAsync($"api/thumbnail/{name}");
        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET api/thumbnail/{name}: {(int)response.StatusCode} {body}{Environment.NewLine}{tool.Output}");
        using JsonDocument answer = JsonDocument.Parse(body);
        Assert.Equal($"photos/{name}", answer.RootElement.GetProperty("photo").GetString());
        Assert.Equal("80x64", answer.RootElement.GetProperty("size").GetString());
        Assert.Equal("10x8", answer.RootElement.GetProperty("thumbnailSize").GetString());
        int thumbnailBytes = answer.RootElement.GetProperty("thumbnailBytes").GetInt32();

        // The thumbnail landed, and its write fired IndexThumbnail (a blob trigger in the worker), which wrote the index.
        Assert.Equal(thumbnailBytes, (await blobs.GetBlobContainerClient("thumbnails").GetBlobClient(name).DownloadContentAsync()).Value.Content.ToMemory().Length);
        JsonElement entry = await WaitForJsonBlobAsync(blobs, "thumbnail-index", $"{name}.json", TimeSpan.FromSeconds(30), tool);
        Assert.Equal(name, entry.GetProperty("name").GetString());
        Assert.Equal(thumbnailBytes, entry.GetProperty("bytes").GetInt32());
        Assert.Equal("10x8", entry.GetProperty("size").GetString());

        Assert.Equal(0, await tool.StopAsync());
    }

    private static async Task<JsonElement> WaitForJsonBlobAsync(BlobServiceClient blobs, string container, string blob, TimeSpan timeout, ToolRun tool)
    {
        BlobClient client = blobs.GetBlobContainerClient(container).GetBlobClient(blob);
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            if (await client.ExistsAsync())
            {
                return JsonDocument.Parse((await client.DownloadContentAsync()).Value.Content.ToMemory()).RootElement.Clone();
            }

            await Task.Delay(200);
        }

        throw new TimeoutException($"{container}/{blob} was not written within {timeout.TotalSeconds:0} s.{Environment.NewLine}{tool.Output}");
    }

    private static async Task UploadAsync(BlobServiceClient blobs, string container, string blob, byte[] content)
    {
        BlobContainerClient client = blobs.GetBlobContainerClient(container);
        await client.CreateIfNotExistsAsync();
        await client.GetBlobClient(blob).UploadAsync(new BinaryData(content), overwrite: true);
    }

    private static async Task UploadIfMissingAsync(BlobServiceClient blobs, string container, string blob, byte[] content)
    {
        BlobContainerClient client = blobs.GetBlobContainerClient(container);
        await client.CreateIfNotExistsAsync();
        if (!await client.GetBlobClient(blob).ExistsAsync())
        {
            await client.GetBlobClient(blob).UploadAsync(new BinaryData(content), overwrite: true);
        }
    }

    private static byte[] RandomBytes(int length, int seed)
    {
        byte[] bytes = new byte[length];
#pragma warning disable CA5394 // Test data, not security.
        new Random(seed).NextBytes(bytes);
#pragma warning restore CA5394
        return bytes;
    }

    /// <summary>A P6 PPM image: a dark gradient with one bright block (something for BoundingBox to find).</summary>
    private static byte[] Ppm(int width, int height)
    {
        byte[] header = Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"P6\n{width} {height}\n255\n"));
        byte[] image = new byte[header.Length + (width * height * 3)];
        header.CopyTo(image, 0);
        for (int y = 0; y < height; y++)
        {
            for (int x = 0; x < width; x++)
            {
                bool bright = x >= width / 4 && x < width / 2 && y >= height / 4 && y < height / 2;
                byte value = bright ? (byte)230 : (byte)(20 + (y * 40 / height));
                int at = header.Length + (((y * width) + x) * 3);
                image[at] = value;
                image[at + 1] = value;
                image[at + 2] = value;
            }
        }

        return image;
    }

    /// <summary>
    /// The installed tool running <c>faascache start --port P</c> in an app folder, its output captured; ready once the
    /// host answers <c>/admin/host/status</c> with every worker running. Dispose kills it and its workers if still running.
    /// </summary>
    private sealed class ToolRun : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly StringBuilder _output = new();
        private readonly Lock _gate = new();
        private readonly TempShmDirectory _shm;

        private ToolRun(Process process, TempShmDirectory shm, int port)
        {
            _process = process;
            _shm = shm;
            Http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}/"), Timeout = TimeSpan.FromSeconds(60) };
        }

        public HttpClient Http { get; }

        public HostStatus Status { get; private set; } = null!;

        public string Output
        {
            get
            {
                lock (_gate)
                {
                    return "Tool output:" + Environment.NewLine + _output;
                }
            }
        }

        public static async Task<ToolRun> StartAsync(string appFolder, string storage, TimeSpan readyTimeout)
        {
            int port = FreePorts.Get();
            var start = new ProcessStartInfo(InstalledToolFactAttribute.ToolPath)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                WorkingDirectory = appFolder,
            };
            start.ArgumentList.Add("start");
            start.ArgumentList.Add("--port");
            start.ArgumentList.Add(port.ToString(CultureInfo.InvariantCulture));
            var shm = new TempShmDirectory();
            start.Environment["AzureWebJobsStorage"] = storage;
            start.Environment["FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES"] = shm.Path;
            start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
            // As a user's shell would have it: not the MSBuild settings of the `dotnet test` that runs this test (the tool
            // may run `dotnet build`, which must pick its own).
            foreach (string key in start.Environment.Keys.Where(k => k.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase) || k.StartsWith("VSTEST", StringComparison.OrdinalIgnoreCase)).ToList())
            {
                start.Environment.Remove(key);
            }

            var run = new ToolRun(new Process { StartInfo = start, EnableRaisingEvents = true }, shm, port);
            run._process.OutputDataReceived += (_, e) => run.Append(e.Data);
            run._process.ErrorDataReceived += (_, e) => run.Append(e.Data);
            try
            {
                run._process.Start();
                run._process.BeginOutputReadLine();
                run._process.BeginErrorReadLine();
                await run.WaitUntilReadyAsync(readyTimeout);
                return run;
            }
            catch
            {
                await run.DisposeAsync();
                throw;
            }
        }

        /// <summary>SIGTERM, as Ctrl+C / a container stop; returns the exit code.</summary>
        public async Task<int> StopAsync()
        {
            ProcessSignals.Send(_process.Id, ProcessSignals.Terminate);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            try
            {
                await _process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"faascache start did not exit within 30 s of SIGTERM.{Environment.NewLine}{Output}");
            }

            return _process.ExitCode;
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                await ProcessTree.KillAsync(_process, TimeSpan.FromSeconds(15));
            }
            finally
            {
                Http.Dispose();
                _process.Dispose();
                _shm.Dispose();
            }
        }

        private async Task WaitUntilReadyAsync(TimeSpan timeout)
        {
            try
            {
                Status = await HostReadiness.WaitAsync(Http, timeout, () => _process.HasExited ? $"(faascache start) exited with code {_process.ExitCode}" : null, TimeSpan.FromMilliseconds(250));
            }
            catch (HostNotReadyException e)
            {
                throw new InvalidOperationException($"{e.Message}{Environment.NewLine}{Output}", e);
            }
        }

        private void Append(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (_gate)
            {
                if (_output.Length < 1024 * 1024)
                {
                    _output.AppendLine(line);
                }
            }
        }
    }
}

/// <summary>
/// A fact that needs the installed faascache tool (<c>.artifacts/bin/faascache</c>, installed by
/// scripts/setup.d/faascache-tool.sh, which scripts/setup.sh runs): skipped, saying why, only when it is not installed.
/// </summary>
public sealed class InstalledToolFactAttribute : FactAttribute
{
    public InstalledToolFactAttribute()
    {
        if (!File.Exists(ToolPath))
        {
            Skip = $"The faascache tool is not installed: '{ToolPath}' is missing (run `bash scripts/setup.d/faascache-tool.sh` or scripts/setup.sh).";
        }
    }

    /// <summary>Gets the installed tool's command: <c>&lt;repository&gt;/.artifacts/bin/faascache</c>.</summary>
    public static string ToolPath => Path.Combine(RepositoryRoot.Find(), ".artifacts", "bin", "faascache");
}
