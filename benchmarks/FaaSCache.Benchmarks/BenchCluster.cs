using FaaSCache.Host.Admin;
using FaaSCache.Host.Invocation;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using FaaSCache.TestSupport;

namespace FaaSCache.Benchmarks;

/// <summary>One host instance of a <see cref="BenchCluster"/>: its id, process and shared-memory root.</summary>
internal sealed class BenchInstance(string id, FaaSCacheHostProcess host, TempShmDirectory shm) : IAsyncDisposable
{
    public string Id { get; } = id;

    public FaaSCacheHostProcess Host { get; } = host;

    public TempShmDirectory Shm { get; } = shm;

    public override string ToString() => Id;

    /// <summary>The raw <c>/admin/host/status</c> answer (members, peer endpoint and pending writes are not in <see cref="HostStatus"/>).</summary>
    public async Task<JsonElement> StatusJsonAsync(CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(10));
        return await Host.Http.GetFromJsonAsync<JsonElement>("admin/host/status", timeout.Token);
    }

    /// <summary>The member ids this instance currently sees, sorted.</summary>
    public async Task<IReadOnlyList<string>> MemberIdsAsync(CancellationToken cancellationToken)
    {
        JsonElement status = await StatusJsonAsync(cancellationToken);
        return status.TryGetProperty("members", out JsonElement members) && members.ValueKind == JsonValueKind.Array
            ? [.. members.EnumerateArray().Select(m => m.GetProperty("id").GetString()!).Order(StringComparer.Ordinal)]
            : [];
    }

    /// <summary><c>POST /admin/cache/remove?key=</c>: drops <paramref name="key"/> from this instance's cache.</summary>
    public async Task RemoveFromCacheAsync(string key, CancellationToken cancellationToken)
    {
        using HttpResponseMessage response = await Host.Http.PostAsync($"admin/cache/remove?key={Uri.EscapeDataString(key)}", null, cancellationToken);
        response.EnsureSuccessStatusCode();
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await Host.DisposeAsync();
        }
        finally
        {
            Shm.Dispose();
        }
    }
}

/// <summary>
/// N real FaaSCache host processes of one app (same <c>--app-name</c>, ids <c>&lt;app&gt;-1..N</c>, a shared-memory root
/// each under /dev/shm) against one Azurite, forming one cache: <see cref="StartAsync"/> returns once every instance's
/// workers are ready and every instance lists all N members. <see cref="StopAsync"/> stops them with SIGTERM (async
/// writes are flushed on shutdown); dispose kills whatever still runs and deletes the shared-memory roots.
/// </summary>
internal sealed class BenchCluster : IAsyncDisposable
{
    private static readonly TimeSpan JoinTimeout = TimeSpan.FromSeconds(90);

    private readonly List<BenchInstance> _instances;

    private BenchCluster(string appName, List<BenchInstance> instances)
    {
        AppName = appName;
        _instances = instances;
    }

    public string AppName { get; }

    public IReadOnlyList<BenchInstance> Instances => _instances;

    public IReadOnlyList<string> Ids => [.. _instances.Select(i => i.Id)];

    public static async Task<BenchCluster> StartAsync(string appDirectory, string storageConnection, string appName, int count, CancellationToken cancellationToken)
    {
        var roots = Enumerable.Range(1, count).Select(_ => new TempShmDirectory("faascache-bench-cluster")).ToList();
        Task<FaaSCacheHostProcess>[] starting =
        [
            .. roots.Select((shm, i) => FaaSCacheHostProcess.StartAsync(
                appDirectory,
                storageConnection,
                shm.Path,
                extraArgs: new Dictionary<string, string> { ["--instance-id"] = InstanceId(appName, i), ["--app-name"] = appName },
                cancellationToken: cancellationToken)),
        ];
        var instances = new List<BenchInstance>();
        try
        {
            try
            {
                await Task.WhenAll(starting);
            }
            finally
            {
                for (int i = 0; i < count; i++)
                {
                    if (starting[i].IsCompletedSuccessfully)
                    {
                        instances.Add(new BenchInstance(InstanceId(appName, i), starting[i].Result, roots[i]));
                    }
                    else
                    {
                        roots[i].Dispose();
                    }
                }
            }

            var cluster = new BenchCluster(appName, instances);
            await Task.WhenAll(instances.Select(i => i.Host.WaitForWorkersAsync(cancellationToken: cancellationToken)));
            await cluster.WaitForMembersAsync(cancellationToken);
            return cluster;
        }
        catch
        {
            foreach (BenchInstance instance in instances)
            {
                await instance.DisposeAsync();
            }

            throw;
        }
    }

    /// <summary>Stops every instance with SIGTERM, in parallel; one line per instance: exit code and maps left in its folder.</summary>
    public async Task<IReadOnlyList<string>> StopAsync()
    {
        return await Task.WhenAll(_instances.Select(async i =>
        {
            int code = await i.Host.StopAsync();
            string maps = Path.Combine(i.Shm.Path, "AzureFunctions");
            int left = Directory.Exists(maps) ? Directory.EnumerateFiles(maps).Count() : 0;
            return $"{i.Id}: exit code {code.ToString(CultureInfo.InvariantCulture)}, {left.ToString(CultureInfo.InvariantCulture)} maps left";
        }));
    }

    public async ValueTask DisposeAsync()
    {
        await Task.WhenAll(_instances.Select(async i => await i.DisposeAsync()));
    }

    private static string InstanceId(string appName, int index) => $"{appName}-{(index + 1).ToString(CultureInfo.InvariantCulture)}";

    private async Task WaitForMembersAsync(CancellationToken cancellationToken)
    {
        List<string> want = [.. Ids.Order(StringComparer.Ordinal)];
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var seen = new List<string>();
            bool all = true;
            foreach (BenchInstance instance in _instances)
            {
                IReadOnlyList<string> members = await instance.MemberIdsAsync(cancellationToken);
                seen.Add($"{instance.Id} sees [{string.Join(", ", members)}]");
                all &= members.SequenceEqual(want);
            }

            if (all)
            {
                return;
            }

            if (clock.Elapsed > JoinTimeout)
            {
                throw new TimeoutException($"After {JoinTimeout.TotalSeconds:0} s the instances did not all list [{string.Join(", ", want)}]: {string.Join("; ", seen)}");
            }

            await Task.Delay(100, cancellationToken);
        }
    }
}
