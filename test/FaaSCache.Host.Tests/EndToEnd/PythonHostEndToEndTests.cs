namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// The built host with the real Python worker against real Azurite: blob bindings through shared memory,
/// cache triggers, polling triggers, worker restarts, the cache switched off and a clean SIGTERM.
/// </summary>
[Trait("Category", "Integration")]
public sealed class PythonHostEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int FiftyMegabytes = SharedScenarios.FiftyMegabytes;

    [Fact]
    public Task A_50_MB_blob_input_is_a_local_miss_first_then_a_local_hit_on_the_same_map_with_nothing_copied_and_the_output_lands_in_storage() =>
        SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(azurite, new PythonApp());

    [Fact]
    public Task A_cache_write_fires_both_downstream_stages_of_the_pipeline_at_once_and_each_fires_once() =>
        SharedScenarios.CacheWriteFiresBothStagesOnceAsync(azurite, new PythonApp());

    [Fact]
    public async Task A_blob_written_to_storage_by_someone_else_fires_its_blob_trigger_by_polling()
    {
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, extraArgs: SharedScenarios.PollEvery(0.5));

        await running.UploadAsync(app.Uploads, "note.txt", Encoding.UTF8.GetBytes("hello from outside"));

        InvocationRecord fired = Assert.Single(await running.Host.WaitForInvocationsAsync("OnUpload", 1, SharedScenarios.TriggerTimeout));
        Assert.Equal(("blob", "succeeded"), (fired.Trigger, fired.Status));
        Assert.Equal($"{app.Uploads}/note.txt", fired.Input("upload").Key);
        Assert.Equal("HELLO FROM OUTSIDE", Encoding.UTF8.GetString(await running.DownloadAsync(app.Processed, "note.txt")));
    }

    [Fact]
    public async Task A_worker_that_does_not_advertise_shared_memory_gets_its_inputs_as_bytes_still_served_from_the_cache()
    {
        // A Python worker with SharedMemoryDataTransfer taken out of its capabilities (and its outputs kept inline), as
        // a worker without shared-memory support (the upstream Node.js worker) behaves.
        using var workers = new TempFolder("faascache-bytes-workers-");
        string realWorker = Path.Combine(RepositoryRoot.Find(), "src", "Workers", "python");
        Directory.CreateDirectory(Path.Combine(workers.Path, "python"));
        await File.WriteAllTextAsync(Path.Combine(workers.Path, "python", "bytes_only_worker.py"), $$"""
            import sys
            sys.path.insert(0, {{JsonSerializer.Serialize(realWorker)}})
            from faascache_worker import bindings, dispatcher
            dispatcher.WORKER_CAPABILITIES.pop("SharedMemoryDataTransfer")
            bindings.OutputPolicy.use_shared_memory = lambda self, size: False
            import worker
            sys.exit(worker.main(sys.argv[1:]))
            """);
        await File.WriteAllTextAsync(Path.Combine(workers.Path, "python", "worker.config.json"), """
            { "description": { "language": "python", "extensions": [".py"], "defaultExecutablePath": "/usr/bin/python3", "defaultWorkerPath": "bytes_only_worker.py" } }
            """);
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, extraArgs: new Dictionary<string, string> { ["--workers-dir"] = workers.Path });
        byte[] model = RandomNumberGenerator.GetBytes(3 * 1024 * 1024);
        await running.UploadAsync(app.Models, "model.bin", model);

        foreach (int _ in new[] { 1, 2 })
        {
            Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(model)), (await running.GetJsonAsync("api/ReadModel?name=model.bin")).GetProperty("sha256").GetString());
        }

        IReadOnlyList<InvocationRecord> runs = await running.Host.GetInvocationsAsync("ReadModel");
        InputRecord second = runs[1].Input("model");
        // Served from the cache (a local hit), but inside the message: no map named, the whole blob copied.
        Assert.Equal(("lh", null, (long)model.Length), (second.Source, second.MapName, second.BytesCopied));
        OutputRecord output = runs[1].Output("result");
        Assert.Null(output.MapName);
        Assert.False(output.Adopted);
    }

    [Fact]
    public async Task The_cache_counters_are_scraped_by_prometheus_on_the_admin_port()
    {
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);
        await running.UploadAsync(app.Models, "m.bin", new byte[1000]);
        foreach (int _ in new[] { 1, 2 })
        {
            using HttpResponseMessage read = await running.SendAsync(HttpMethod.Get, "api/ReadModel?name=m.bin");
            Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        }

        // The exporter collects on scrape; what the admin status counts, /metrics shows too.
        string metrics = await running.Host.Http.GetStringAsync("metrics");
        Assert.Matches(@"faascache_misses_total\{[^}]*type=""local""[^}]*\} 1", metrics);
        Assert.Matches(@"faascache_hits_total\{[^}]*type=""local""[^}]*\} 1", metrics);
        HostStatus status = await running.Host.GetStatusAsync();
        Assert.Equal((1L, 1L), (status.Count.LocalMisses, status.Count.LocalHits));
    }

    [Fact]
    public async Task A_restarted_host_fires_writes_made_while_it_was_down_and_never_fires_old_ones_again()
    {
        var app = new PythonApp();
        using FunctionAppFolder folder = app.Build();
        using var shm = new TempShmDirectory();
        var blobs = azurite.CreateServiceClient().GetBlobContainerClient(app.Uploads);
        await blobs.CreateIfNotExistsAsync();

        await using (FaaSCacheHostProcess first = await FaaSCacheHostProcess.StartAsync(folder.Path, azurite.ConnectionString, shm.Path, extraArgs: SharedScenarios.PollEvery(0.5)))
        {
            await first.WaitForWorkersAsync();
            await blobs.UploadBlobAsync("before.txt", BinaryData.FromString("old"));
            Assert.Single(await first.WaitForInvocationsAsync("OnUpload", 1, SharedScenarios.TriggerTimeout));
            Assert.Equal(0, await first.StopAsync());
        }

        await blobs.UploadBlobAsync("while-down.txt", BinaryData.FromString("new"));
        await using FaaSCacheHostProcess second = await FaaSCacheHostProcess.StartAsync(folder.Path, azurite.ConnectionString, shm.Path, extraArgs: SharedScenarios.PollEvery(0.5));
        await second.WaitForWorkersAsync();
        InvocationRecord fired = Assert.Single(await second.WaitForInvocationsAsync("OnUpload", 1, SharedScenarios.TriggerTimeout));
        Assert.Equal($"{app.Uploads}/while-down.txt", fired.Input("upload").Key);

        // Several more polls: the write the first run handled has a receipt, so it does not fire again.
        await Task.Delay(TimeSpan.FromSeconds(3));
        Assert.Single(await second.GetInvocationsAsync("OnUpload"));
    }

    [Fact]
    public async Task A_worker_killed_during_an_invocation_fails_that_invocation_clearly_and_the_restarted_worker_serves_the_next()
    {
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);
        int pid = (await running.Host.GetStatusAsync()).Worker("python").Pid;

        Task<HttpResponseMessage> slow = running.SendAsync(HttpMethod.Get, "api/Slow?seconds=30", timeout: TimeSpan.FromSeconds(45));
        string invocationId = await WaitForSlowStartAsync(running.Host);
        ProcessSignals.Send(pid, ProcessSignals.Kill);

        using HttpResponseMessage failed = await slow;
        string body = await failed.Content.ReadAsStringAsync();
        Assert.True(failed.StatusCode == HttpStatusCode.InternalServerError, $"{failed.StatusCode}: {body}");
        using JsonDocument json = JsonDocument.Parse(body);
        string error = json.RootElement.GetProperty("error").GetString()!;
        // Whichever the host notices first, the stream breaking or the process exit, the message names the
        // worker's pid, what happened to it, the invocation and the function.
        Assert.Matches($@"^The python worker \(pid {pid}\) (disconnected|exited with code -?\d+)", error);
        Assert.Contains($"invocation {invocationId} of function 'Slow'", error, StringComparison.Ordinal);
        Assert.Contains("restarted", error, StringComparison.Ordinal);

        using HttpResponseMessage next = await running.SendAsync(HttpMethod.Get, "api/Slow?seconds=0");
        string nextBody = await next.Content.ReadAsStringAsync();
        Assert.True(next.StatusCode == HttpStatusCode.OK, $"{next.StatusCode}: {nextBody}");
        Assert.StartsWith("slept in ", nextBody, StringComparison.Ordinal);

        HostStatus status = await running.Host.GetStatusAsync();
        HostWorkerStatus worker = status.Worker("python");
        Assert.Equal(1, worker.Restarts);
        Assert.NotEqual(pid, worker.Pid);
        Assert.True(worker.Pid > 0);
        Assert.Equal((1L, 1L), (status.Invocations.Succeeded, status.Invocations.Failed));
        InvocationRecord record = Assert.Single(await running.Host.GetInvocationsAsync("Slow"), i => i.Status == "failed");
        Assert.Equal(invocationId, record.InvocationId);
    }

    [Fact]
    public async Task With_the_cache_off_every_read_comes_from_storage_and_copies_the_whole_blob()
    {
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, cache: false);
        byte[] model = SharedScenarios.RandomBytes(FiftyMegabytes);
        await running.UploadAsync(app.Models, "model.bin", model);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(model));

        foreach (int _ in new[] { 1, 2 })
        {
            Assert.Equal(sha256, (await running.GetJsonAsync("api/ReadModel?name=model.bin")).GetProperty("sha256").GetString());
        }

        IReadOnlyList<InvocationRecord> invocations = await running.Host.GetInvocationsAsync("ReadModel");
        Assert.Equal(2, invocations.Count);
        Assert.All(invocations, i =>
        {
            InputRecord input = i.Input("model");
            Assert.Equal(("storage", (long)FiftyMegabytes, (long)FiftyMegabytes), (input.Source, input.Bytes, input.BytesCopied));
            Assert.Null(input.MapName);
            Assert.False(i.Output("result").Adopted);
        });
        Assert.Equal($"{FiftyMegabytes}:{sha256}", Encoding.UTF8.GetString(await running.DownloadAsync(app.Results, "model.bin.txt")));
        HostStatus status = await running.Host.GetStatusAsync();
        Assert.Equal("off", status.Cache);
        Assert.Null(status.Counters);
        Assert.True(status.Invocations.BytesCopied >= 2L * FiftyMegabytes, $"bytes copied: {status.Invocations.BytesCopied}");
    }

    [Fact]
    public async Task SIGTERM_stops_the_host_with_exit_code_0_leaving_no_worker_and_no_shared_memory_map()
    {
        var app = new PythonApp();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);
        await running.UploadAsync(app.Models, "small.bin", SharedScenarios.RandomBytes(1024 * 1024));
        using (HttpResponseMessage response = await running.SendAsync(HttpMethod.Get, "api/ReadModel?name=small.bin"))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        HostStatus status = await running.Host.GetStatusAsync();
        int workerPid = status.Worker("python").Pid;
        Assert.Equal(running.MapDirectory, status.SharedMemory.Directory);
        Assert.NotEmpty(Directory.EnumerateFiles(running.MapDirectory));

        int code = await running.Host.StopAsync();

        Assert.True(code == 0, $"exit code {code}{Environment.NewLine}{running.Host.Output}");
        Assert.False(Directory.Exists($"/proc/{workerPid}"), $"worker {workerPid} is still running");
        Assert.DoesNotContain("did not exit after WorkerTerminate", running.Host.Output, StringComparison.Ordinal);
        Assert.Empty(Directory.EnumerateFileSystemEntries(running.MapDirectory));
    }

    private static async Task<string> WaitForSlowStartAsync(FaaSCacheHostProcess host)
    {
        const string marker = "slow-started ";
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        while (true)
        {
            string output = host.Output;
            int at = output.IndexOf(marker, StringComparison.Ordinal);
            if (at >= 0)
            {
                return output.Substring(at + marker.Length, 36);
            }

            Assert.False(timeout.IsCancellationRequested, $"'Slow' did not start within 20 s.{Environment.NewLine}{output}");
            await Task.Delay(50);
        }
    }
}
