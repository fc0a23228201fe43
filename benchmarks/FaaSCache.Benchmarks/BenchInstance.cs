using System.Diagnostics;

namespace FaaSCache.Benchmarks;

/// <summary>One host process of a benchmark with its own shared-memory root, started with the given instance id and arguments (fig9, results).</summary>
internal sealed class BenchInstance(string id, FaaSCacheHostProcess host, TempShmDirectory shm) : IAsyncDisposable
{
    public string Id => id;

    public FaaSCacheHostProcess Host => host;

    /// <summary>Starts the host on <paramref name="app"/> as <paramref name="id"/> and waits for its workers.</summary>
    public static async Task<BenchInstance> StartAsync(FunctionAppFolder app, AzuriteServer azurite, bool cache, string id, string appName, bool membership, CancellationToken ct, IDictionary<string, string>? extraArgs = null)
    {
        var shm = new TempShmDirectory($"faascache-bench-{id}");
        var args = new Dictionary<string, string>(extraArgs ?? new Dictionary<string, string>())
        {
            ["--instance-id"] = id,
            ["--app-name"] = appName,
            ["--membership"] = membership ? "on" : "off",
        };
        FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path, cache, args, cancellationToken: ct);
        await host.WaitForWorkersAsync(cancellationToken: ct);
        return new BenchInstance(id, host, shm);
    }

    /// <summary>Waits until this instance's membership lists <paramref name="count"/> members (at most 60 s).</summary>
    public async Task WaitForMembersAsync(int count, CancellationToken ct)
    {
        var clock = Stopwatch.StartNew();
        while ((await Host.GetStatusAsync(ct)).Members?.Count < count)
        {
            if (clock.Elapsed > TimeSpan.FromSeconds(60))
            {
                throw new TimeoutException($"{Id} did not see {count} members within 60 s.");
            }

            await Task.Delay(100, ct);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Host.DisposeAsync();
        shm.Dispose();
    }
}
