using FaaSCache.Host.Invocation;
using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;
using FaaSCache.Simulation.WhatIf;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// <c>start --access-log FILE</c>: the app's blob accesses, written by the real host with the real Python worker against
/// real Azurite, with the cache off (an app observed before the cache is turned on), read back by what-if's own reader.
/// </summary>
[Trait("Category", "Integration")]
public sealed class AccessLogTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task With_the_cache_off_every_input_and_output_is_logged_with_storage_versions_and_what_if_replays_the_log()
    {
        var app = new PythonApp();
        using var folder = new TempFolder("faascache-accesslog-");
        string log = Path.Combine(folder.Path, "logs", "access.csv");
        byte[] model = RandomNumberGenerator.GetBytes(300_000);
        string modelVersion;
        await using (RunningHost running = await RunningHost.StartAsync(azurite, app.Build, cache: false, extraArgs: new Dictionary<string, string> { ["--access-log"] = log, ["--app-name"] = "observed" }))
        {
            await running.UploadAsync(app.Models, "model.bin", model);
            modelVersion = (await running.Blobs.GetBlobContainerClient(app.Models).GetBlobClient("model.bin").GetPropertiesAsync()).Value.ETag.ToString().Trim('"');
            foreach (int _ in new[] { 1, 2 })
            {
                JsonElement json = await running.GetJsonAsync("api/ReadModel?name=model.bin");
                Assert.Equal(model.Length, json.GetProperty("bytes").GetInt32());
            }
        }

        Assert.Equal(AccessLog.Header, (await File.ReadAllLinesAsync(log))[0]);
        var rows = new List<BlobAccess>();
        await foreach (BlobAccess row in TraceFile.ReadAsync(log))
        {
            rows.Add(row);
        }

        BlobAccess[] reads = [.. rows.Where(r => r.IsRead)];
        BlobAccess[] writes = [.. rows.Where(r => r.IsWrite)];
        Assert.Equal(2, reads.Length);
        Assert.All(reads, r => Assert.Equal(($"{app.Models}/model.bin", (double)model.Length, modelVersion, "observed"), (r.BlobName, r.BlobBytes, r.ETag.Trim('"'), r.AppName)));
        Assert.Equal(2, writes.Length);
        Assert.All(writes, w => Assert.Equal($"{app.Results}/model.bin.txt", w.BlobName));
        Assert.All(writes, w => Assert.False(string.IsNullOrEmpty(w.ETag), "a write's version is storage's new ETag"));
        Assert.Equal(2, rows.Select(r => r.InvocationId).Distinct().Count());

        AppTrace trace = await WhatIfReport.LoadAppAsync(log, appName: null);
        Assert.Equal(4, trace.Count);
    }

    [Fact]
    public void A_log_that_cannot_be_opened_stops_the_start_naming_the_file()
    {
        using var folder = new TempFolder("faascache-accesslog-");
        string blocked = Path.Combine(folder.Path, "a-file");
        File.WriteAllText(blocked, "not a folder");

        IOException e = Assert.Throws<IOException>(() => new AccessLog(Path.Combine(blocked, "access.csv"), "app"));

        Assert.Contains("--access-log", e.Message, StringComparison.Ordinal);
        Assert.Contains(Path.Combine(blocked, "access.csv"), e.Message, StringComparison.Ordinal);
    }
}
