using FaaSCache.Host.BlobEndpoint;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// Functions that call the storage SDK themselves, unchanged, through the built host: a Python v2 app builds its own
/// <c>BlobServiceClient</c> from the app setting, as functions do for what a binding cannot express. The host points
/// that setting's blob endpoint at its SDK endpoint, so the reads are served by the cache and the writes go through
/// its write path (and fire a blob trigger once), whichever SDK makes them (Python here, Node.js's as a client of the host).
/// </summary>
[Trait("Category", "Integration")]
public sealed class SdkEndpointEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task a_python_function_that_builds_its_own_blob_client_is_served_from_the_cache_on_its_second_invocation()
    {
        string suffix = Guid.NewGuid().ToString("N")[..10];
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => App(suffix), extraArgs: SharedScenarios.PollEvery(0.5));
        byte[] data = RandomNumberGenerator.GetBytes(3 * 1024 * 1024);
        await running.UploadAsync($"sdkdata-{suffix}", "input.bin", data);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(data));

        foreach (int _ in new[] { 1, 2 })
        {
            JsonElement json = await running.GetJsonAsync("api/sdkread/input.bin");
            Assert.Equal(sha256, json.GetProperty("sha256").GetString());
            Assert.StartsWith("http://127.0.0.1:", json.GetProperty("endpoint").GetString(), StringComparison.Ordinal);
        }

        List<SdkRequestRecord> reads = (await running.SdkRequestsAsync($"sdkdata-{suffix}/input.bin")).Where(r => r.Operation == "read").ToList();
        Assert.Equal(["lm", "lh"], reads.Select(r => r.Source));
        // Python asks for the first 32 MiB as a range: 206 with the whole 3 MiB.
        Assert.All(reads, r => Assert.Equal((206, (long)data.Length), (r.Status, r.Bytes)));

        // A write through the SDK goes through the cache's write path: in storage, cached, and the trigger fires once.
        using (HttpResponseMessage write = await running.SendAsync(HttpMethod.Post, "api/sdkwrite/out.txt", "written by the sdk"u8.ToArray()))
        {
            Assert.True(write.StatusCode == HttpStatusCode.OK, $"{write.StatusCode}: {await write.Content.ReadAsStringAsync()}");
        }

        Assert.Equal("written by the sdk", Encoding.UTF8.GetString(await running.DownloadAsync($"sdkout-{suffix}", "out.txt")));
        byte[] seen = await WaitForBlobAsync(running, $"sdkseen-{suffix}", "out.txt");
        Assert.Equal("18", Encoding.UTF8.GetString(seen));
        await Task.Delay(TimeSpan.FromSeconds(2));
        Assert.Single(await running.Host.GetInvocationsAsync("OnWrite"));
        Assert.Contains(await running.SdkRequestsAsync($"sdkout-{suffix}/out.txt"), r => r is { Operation: "write", Status: 201 });
    }

    [Fact]
    public async Task the_node_storage_sdks_single_shot_and_block_uploads_through_the_host_land_in_storage_and_fire_a_blob_trigger_once_each()
    {
        string suffix = Guid.NewGuid().ToString("N")[..10];
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => App(suffix), extraArgs: SharedScenarios.PollEvery(0.5));
        string container = $"sdknode-{suffix}";

        // The Node.js SDK (@azure/storage-blob) as a function's own client would use it, with the connection the host's
        // workers get: upload() (one Put Blob) and uploadData in 1 MiB blocks (Put Block x4, Put Block List).
        ProcessRun run = await SdkClientScripts.RunAsync("sdk-check.js", ["upload-kinds", container, "node-"], TimeSpan.FromMinutes(2), new Dictionary<string, string>
        {
            [SdkClientScripts.EndpointConnectionVariable] = await running.SdkEndpointConnectionAsync(azurite.ConnectionString),
            [SdkClientScripts.StorageConnectionVariable] = azurite.ConnectionString,
        });
        Assert.True(run.ExitCode == 0, run.ToString());

        (string Name, int Size)[] uploads = [("node-single.bin", 5000), ("node-blocks.bin", (3 * 1024 * 1024) + 11)];
        foreach ((string name, int size) in uploads)
        {
            byte[] stored = await running.DownloadAsync(container, name);
            string sha256 = Convert.ToHexStringLower(SHA256.HashData(stored));
            Assert.Equal(size, stored.Length);
            Assert.Contains($"upload-kinds {name} {size} {sha256}", run.Stdout, StringComparison.Ordinal);
            // The function saw the bytes storage has.
            Assert.Equal($"{size} {sha256}", Encoding.UTF8.GetString(await WaitForBlobAsync(running, $"sdknodeseen-{suffix}", name)));
        }

        Assert.Equal(["write"], (await running.SdkRequestsAsync($"{container}/node-single.bin")).Select(r => r.Operation));
        Assert.Equal(["block", "block", "block", "block", "commit"], (await running.SdkRequestsAsync($"{container}/node-blocks.bin")).Select(r => r.Operation).Order(StringComparer.Ordinal));

        // A blob put straight into storage is found only by polling: once it fired, a poll listed the container after
        // the uploads, and a second firing of either would have shown.
        await running.UploadAsync(container, "zz-polled.bin", "polled"u8.ToArray());
        Assert.Equal($"6 {Convert.ToHexStringLower(SHA256.HashData("polled"u8))}", Encoding.UTF8.GetString(await WaitForBlobAsync(running, $"sdknodeseen-{suffix}", "zz-polled.bin")));
        IReadOnlyList<InvocationRecord> fired = await running.Host.GetInvocationsAsync("OnNodeUpload");
        Assert.Equal(3, fired.Count);
        Assert.All(fired, f => Assert.Equal("succeeded", f.Status));
    }

    private static async Task<byte[]> WaitForBlobAsync(RunningHost running, string container, string blob)
    {
        DateTime deadline = DateTime.UtcNow + SharedScenarios.TriggerTimeout;
        while (true)
        {
            try
            {
                return await running.DownloadAsync(container, blob);
            }
            catch (Azure.RequestFailedException e) when (e.Status == 404 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(200);
            }
        }
    }

    private static FunctionAppFolder App(string suffix) => PipelineApp.NewBuilder("faascache-sdkapp", "python")
        .WithFile("function_app.py", $$"""
            import hashlib
            import json
            import os

            import azure.functions as func
            from azure.storage.blob import BlobServiceClient

            app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
            _service = None


            def service():
                # Built once from the app setting, as functions do: the host decides where the setting points.
                global _service
                if _service is None:
                    _service = BlobServiceClient.from_connection_string(os.environ["AzureWebJobsStorage"])
                return _service


            @app.function_name("SdkRead")
            @app.route(route="sdkread/{name}", methods=["GET"])
            def sdk_read(req: func.HttpRequest) -> func.HttpResponse:
                blob = service().get_blob_client("sdkdata-{{suffix}}", req.route_params["name"])
                data = blob.download_blob().readall()
                body = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "endpoint": service().url}
                return func.HttpResponse(json.dumps(body), mimetype="application/json")


            @app.function_name("SdkWrite")
            @app.route(route="sdkwrite/{name}", methods=["POST"])
            def sdk_write(req: func.HttpRequest) -> func.HttpResponse:
                container = service().get_container_client("sdkout-{{suffix}}")
                if not container.exists():
                    container.create_container()
                container.upload_blob(req.route_params["name"], req.get_body(), overwrite=True)
                return func.HttpResponse("ok")


            @app.function_name("OnWrite")
            @app.blob_trigger(arg_name="written", path="sdkout-{{suffix}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @app.blob_output(arg_name="seen", path="sdkseen-{{suffix}}/{name}", connection="AzureWebJobsStorage")
            def on_write(written: func.InputStream, seen: func.Out[str]) -> None:
                seen.set(str(len(written.read())))


            @app.function_name("OnNodeUpload")
            @app.blob_trigger(arg_name="uploaded", path="sdknode-{{suffix}}/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            @app.blob_output(arg_name="seen", path="sdknodeseen-{{suffix}}/{name}", connection="AzureWebJobsStorage")
            def on_node_upload(uploaded: func.InputStream, seen: func.Out[str]) -> None:
                data = uploaded.read()
                seen.set(f"{len(data)} {hashlib.sha256(data).hexdigest()}")
            """)
        .Build();
}
