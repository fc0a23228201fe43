using System.Text.RegularExpressions;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// Two apps, two host processes, one Azurite, and one shared-memory directory (the worst case: both on the default
/// /dev/shm): a worker of app A cannot reach app B's cached objects through its host, whether it names B's map in an
/// output, asks its host to close it, or asks for B's key; B's map is neither read, closed nor deleted, and B still serves
/// it. The OS boundary (both run as one uid, so a process that scans the directory could open a 0600 file) is the README's.
/// </summary>
[Trait("Category", "Reliability")]
public sealed partial class CrossAppMapTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests, IDisposable
{
    private readonly TempShmDirectory _shm = new("faascache-crossapp");

    [Fact]
    public async Task A_worker_of_app_a_cannot_take_close_or_read_app_bs_map_through_its_host()
    {
        await using FakeWorkerHost a = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path, appName: "app-a");
        await using FakeWorkerHost b = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path, appName: "app-b");
        var random = new Random(13);
        MisbehavingWorkerCases.HostMap secret = await MisbehavingWorkerTests.CacheAsync(b, "secret", random);
        string bMap = Path.Combine(b.MapDirectory, secret.Map.Name);
        output.WriteLine($"app B holds 'secret' in {bMap}");

        // 1. A's worker hands B's map over as its output: A's host refuses it (B's host holds it), takes and deletes nothing.
        string refused = await MisbehavingWorkerCases.RefusedMapAsync(a, random, secret.Map.Name, secret.Map.Count, "is open in another process");
        output.WriteLine($"A refused {refused}");
        Assert.True(File.Exists(bMap), "B's map was deleted");
        Assert.False(await ExistsAsync(a, $"m-"), "A stored nothing from B's map");

        // 2. A's worker asks its host to close B's map: only the host sends closes; nothing is closed.
        await MisbehavingWorkerCases.CloseRequestFromWorkerAsync(a, random, await MisbehavingWorkerTests.CacheAsync(a, "own", random));
        var close = new CloseSharedMemoryResourcesRequest { MapNames = { secret.Map.Name } };
        await MisbehavingWorkerCases.LoggedAsync(a, new StreamingMessage { CloseSharedMemoryResourcesRequest = close }, $"naming maps [{secret.Map.Name}]");

        // 3. A asks for B's key: A's bindings resolve in A's container only, so "secret" there does not exist, and a name
        //    that climbs out of it is refused; A's worker never gets B's map.
        (ParameterBinding missing, bool ok) = await a.GetAsync("secret");
        Assert.True(ok);
        Assert.Null(missing.RpcSharedMemory);
        Assert.Equal(TypedData.DataOneofCase.None, missing.Data?.DataCase ?? TypedData.DataOneofCase.None);
        foreach (string climb in (string[])[$"../{b.Container.Name}/secret", $"..%2F{b.Container.Name}%2Fsecret", $"/{b.Container.Name}/secret"])
        {
            (Task<HttpResponseMessage> http, InvocationRequest? request) = await TryStartGetAsync(a, climb);
            if (request is not null)
            {
                ParameterBinding input = request.InputData.Single(i => i.Name == "data");
                Assert.NotEqual(secret.Map.Name, input.RpcSharedMemory?.Name);
                Assert.NotEqual(secret.Content, input.RpcSharedMemory is null ? input.Data?.Bytes?.ToByteArray() : a.ContentOf(input));
                await a.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "read"));
            }

            using HttpResponseMessage response = await http;
            string error = await FakeWorkerHost.ErrorOfAsync(response);
            output.WriteLine($"A asked for '{climb}': {(int)response.StatusCode} {error}");
            if (request is null)
            {
                Assert.Contains("would leave the binding's container", error, StringComparison.Ordinal);
            }
        }

        // B still serves its object from the same map, whole; both hosts are up.
        await MisbehavingWorkerCases.ExpectCachedAsync(b, secret);
        Assert.False(a.Host.HasExited || b.Host.HasExited);

        // Maps of both apps: 0600, 128-bit random names (32 hex digits).
        string[] maps = [.. Directory.EnumerateFiles(b.MapDirectory)];
        Assert.NotEmpty(maps);
        foreach (string map in maps)
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(map));
            Assert.Matches(RandomName(), Path.GetFileName(map));
        }
    }

    public void Dispose() => _shm.Dispose();

    private static async Task<bool> ExistsAsync(FakeWorkerHost rig, string prefix)
    {
        await foreach (Azure.Storage.Blobs.Models.BlobItem item in rig.Container.GetBlobsAsync(Azure.Storage.Blobs.Models.BlobTraits.None, Azure.Storage.Blobs.Models.BlobStates.None, prefix, CancellationToken.None))
        {
            _ = item;
            return true;
        }

        return false;
    }

    /// <summary>A Get the host may refuse before any invocation (a bad key): then no request reaches the worker.</summary>
    private static async Task<(Task<HttpResponseMessage> Http, InvocationRequest? Request)> TryStartGetAsync(FakeWorkerHost rig, string name)
    {
        Task<HttpResponseMessage> http = rig.Host.Http.GetAsync($"api/Get?name={name}");
        using var stop = new CancellationTokenSource();
        Task<bool> waiting = rig.Worker.InvocationWaitingAsync(stop.Token);
        if (await Task.WhenAny(http, waiting) == http && !waiting.IsCompleted)
        {
            await stop.CancelAsync();
            return (http, null);
        }

        return (http, await rig.Worker.NextInvocationAsync(FakeWorkerHost.Timeout));
    }

    [GeneratedRegex("^[0-9a-f]{32}$")]
    private static partial Regex RandomName();
}
