namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// §3.4 end to end (the paper's Table 5): the built host, the real Python worker and Azurite. Large objects are cached,
/// then a function grows its own memory step by step past the app's limit less the headroom, charged as a cgroup would
/// charge it (private resident bytes plus the shared-memory files' pages): the Memory Daemon, reading the worker's RSS
/// from /proc, evicts as it grows and gives the pages back, and the allocation completes within the limit.
/// </summary>
[Trait("Category", "Integration")]
public sealed class MemoryDaemonEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    private const long MiB = 1L << 20;
    private const long Limit = 1024 * MiB; // with the default 10% headroom the daemon evicts above ~922 MiB
    private const int Objects = 3;
    private const int ObjectMiB = 64;

    [Fact]
    public async Task The_daemon_evicts_cached_objects_as_a_python_workers_memory_grows_and_the_allocation_succeeds()
    {
        string suffix = Guid.NewGuid().ToString("N")[..8];
        string models = $"models-{suffix}";
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Build(models));
        for (int i = 0; i < Objects; i++)
        {
            var bytes = new byte[ObjectMiB * MiB];
            new Random(i).NextBytes(bytes);
            await running.UploadAsync(models, $"m{i}.bin", bytes);
            using HttpResponseMessage read = await running.SendAsync(HttpMethod.Get, $"api/ReadModel?name=m{i}.bin");
            Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        }

        HostStatus before = await running.Host.GetStatusAsync();
        Assert.Equal(Objects * ObjectMiB * MiB, before.Count.BytesCached);
        Assert.NotNull(before.Memory);
        Assert.Equal(("memoryLimitBytes", Limit), (before.Memory.LimitSource, before.Memory.LimitBytes));
        Assert.Equal(0, before.Memory.ObjectsEvicted);
        long used = before.Memory.HostPrivateBytes + before.Memory.WorkerPrivateBytes + before.Memory.CachedBytes;
        Assert.True(used < before.Memory.ThresholdBytes, $"the app starts below the threshold ({used} of {before.Memory.ThresholdBytes} bytes)");

        // Grow the worker past the threshold by 128 MiB more than what is cached now: objects must go for it to fit.
        long grow = before.Memory.ThresholdBytes - used + (128 * MiB);
        string mb = (grow / MiB).ToString(CultureInfo.InvariantCulture);
        string limit = Limit.ToString(CultureInfo.InvariantCulture);
        using HttpResponseMessage allocation = await running.SendAsync(HttpMethod.Get, $"api/Allocate?mb={mb}&step=16&limit={limit}", timeout: TimeSpan.FromMinutes(3));
        string body = await allocation.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.OK, allocation.StatusCode);
        using JsonDocument result = JsonDocument.Parse(body);
        // The pages the daemon evicts must go back: a file kept for reuse still holds them (the regression of issue 36).
        Assert.True(result.RootElement.GetProperty("ok").GetBoolean(), body);
        Assert.Equal(grow / MiB, result.RootElement.GetProperty("allocatedMb").GetInt64());

        HostStatus after = await running.Host.GetStatusAsync();
        Assert.NotNull(after.Memory);
        Assert.True(after.Memory.ObjectsEvicted >= 2, $"the daemon evicted {after.Memory.ObjectsEvicted} object(s)");
        Assert.True(after.Count.MemoryEvictions >= 2);
        Assert.True(after.Count.BytesCached <= (Objects - 2) * ObjectMiB * MiB);
        Assert.True(after.Memory.EvictionRounds >= 1);
    }

    private static FunctionAppFolder Build(string models) => new FunctionAppBuilder { NamePrefix = "faascache-memapp" }
        .WithHostJson(string.Create(CultureInfo.InvariantCulture, $$"""
            {
              "version": "2.0",
              "extensions": { "faasCache": { "consistency": "local", "memoryLimitBytes": {{Limit}}, "capacityBytes": {{4 * ObjectMiB * MiB}} } }
            }
            """))
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
        .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true")
        .WithFunction("ReadModel", $$"""
            {
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
                { "type": "blob", "direction": "in", "name": "model", "path": "{{models}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import azure.functions as func


            def main(req: func.HttpRequest, model: func.InputStream) -> func.HttpResponse:
                size = 0
                while True:
                    chunk = model.read(1 << 20)
                    if not chunk:
                        break
                    size += len(chunk)
                return func.HttpResponse(str(size))
            """))
        .WithFunction("Allocate", """
            {
              "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
                { "type": "http", "direction": "out", "name": "$return" }
              ]
            }
            """, ("__init__.py", """
            import json
            import os
            import time

            import azure.functions as func


            # As a cgroup v2 memory.max would charge the app (this machine enforces none): the host's and every worker's
            # private resident bytes, plus the pages of every file under the shared-memory root (the cache's maps and
            # any file kept for reuse: tmpfs pages are charged as shmem). A step past the limit fails as an OOM would.
            def private_bytes(pid):
                rss = shmem = 0
                try:
                    with open(f"/proc/{pid}/status") as status:
                        for line in status:
                            if line.startswith("VmRSS:"):
                                rss = int(line.split()[1]) * 1024
                            elif line.startswith("RssShmem:"):
                                shmem = int(line.split()[1]) * 1024
                except OSError:
                    return 0
                return max(0, rss - shmem)


            def children(parent):
                found = []
                for entry in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        with open(f"/proc/{entry}/stat") as stat:
                            if int(stat.read().rsplit(")", 1)[1].split()[1]) == parent:
                                found.append(int(entry))
                    except (OSError, IndexError, ValueError):
                        pass
                return found


            def shared_memory_bytes():
                total = 0
                for root in filter(None, os.environ.get("FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES", "").split(",")):
                    for folder, _, files in os.walk(root):
                        for name in files:
                            try:
                                total += os.stat(os.path.join(folder, name)).st_blocks * 512
                            except OSError:
                                pass
                return total


            def main(req: func.HttpRequest) -> func.HttpResponse:
                total = int(req.params["mb"])
                step = int(req.params["step"])
                limit = int(req.params["limit"])
                held = []
                allocated = 0
                while allocated < total:
                    n = min(step, total - allocated)
                    host = os.getppid()
                    function = private_bytes(host) + sum(private_bytes(p) for p in children(host))
                    charged = function + shared_memory_bytes()
                    if charged + (n << 20) > limit:
                        return func.HttpResponse(json.dumps({"ok": False, "allocatedMb": allocated, "reason": f"{charged + (n << 20)} bytes would exceed the {limit}-byte limit (function {function}, shared memory {charged - function})"}), mimetype="application/json")
                    # Every page written, so the worker's RSS grows by the chunk.
                    held.append(b"\x01" * (n << 20))
                    allocated += n
                    # Longer than the daemon's sampling interval: it sees each step.
                    time.sleep(0.5)
                return func.HttpResponse(json.dumps({"ok": True, "allocatedMb": allocated}), mimetype="application/json")
            """))
        .Build();
}
