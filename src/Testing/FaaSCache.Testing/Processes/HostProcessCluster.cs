using FaaSCache.Diagnostics;
using FaaSCache.Ownership;

namespace FaaSCache.Testing;

/// <summary>
/// The one cluster harness of the tests and the benchmarks: N real FaaSCache host processes of one app (same
/// <c>--app-name</c>, ids <c>&lt;app&gt;-1..N</c>, a shared-memory root each under /dev/shm) against one storage
/// account, forming one cache. <see cref="StartAsync"/> returns once every instance's workers are ready and every
/// instance lists all N members; <see cref="StopAsync"/> stops them with SIGTERM (async writes are flushed); dispose
/// kills whatever still runs, deletes the shared-memory roots, and hands the tail of each host's output to the log.
/// </summary>
public sealed class HostProcessCluster : IAsyncDisposable
{
    /// <summary>How long the instances may take to list each other.</summary>
    public static readonly TimeSpan JoinTimeout = TimeSpan.FromSeconds(90);

    private readonly List<ClusterInstance> _instances;
    private readonly string _appDirectory;
    private readonly string _storageConnection;
    private readonly Action<string> _log;
    private readonly Func<int, HostNetwork>? _network;

    private HostProcessCluster(string appDirectory, string storageConnection, string appName, List<ClusterInstance> instances, Action<string> log, Func<int, HostNetwork>? network)
    {
        _network = network;
        _appDirectory = appDirectory;
        _storageConnection = storageConnection;
        AppName = appName;
        _instances = instances;
        _log = log;
    }

    /// <summary>Gets the app name (<c>--app-name</c>).</summary>
    public string AppName { get; }

    /// <summary>Gets the instances, in id order.</summary>
    public IReadOnlyList<ClusterInstance> Instances => _instances;

    /// <summary>Gets the instance ids.</summary>
    public IReadOnlyList<string> Ids => [.. _instances.Select(i => i.Id)];

    /// <summary>Gets instance <paramref name="index"/>.</summary>
    public ClusterInstance this[int index] => _instances[index];

    /// <summary>
    /// Starts <paramref name="count"/> instances of the app in <paramref name="appDirectory"/> and waits until they form one
    /// cache; <paramref name="network"/>, when given, places instance i (0-based) on a network of its own, e.g. a namespace.
    /// </summary>
    public static async Task<HostProcessCluster> StartAsync(
        string appDirectory,
        string storageConnection,
        string appName,
        int count,
        Action<string>? log = null,
        Func<int, HostNetwork>? network = null,
        CancellationToken cancellationToken = default)
    {
        var clock = Stopwatch.StartNew();
        var roots = Enumerable.Range(1, count).Select(_ => new TempShmDirectory("faascache-cluster")).ToList();
        Task<FaaSCacheHostProcess>[] starting = [.. roots.Select((shm, i) => StartInstanceAsync(appDirectory, storageConnection, appName, InstanceId(appName, i), shm, network?.Invoke(i), cancellationToken))];
        var instances = new List<ClusterInstance>();
        try
        {
            await Task.WhenAll(starting);
        }
        catch
        {
            // Whatever did start goes with the roots.
        }

        for (int i = 0; i < count; i++)
        {
            if (starting[i].IsCompletedSuccessfully)
            {
                instances.Add(new ClusterInstance(InstanceId(appName, i), starting[i].Result, roots[i]));
            }
            else
            {
                roots[i].Dispose();
            }
        }

        var cluster = new HostProcessCluster(appDirectory, storageConnection, appName, instances, log ?? (_ => { }), network);
        try
        {
            await Task.WhenAll(starting); // rethrows the first start-up failure, with the host's output
            await Task.WhenAll(instances.Select(i => i.Host.WaitForWorkersAsync(cancellationToken: cancellationToken)));
            await cluster.WaitForMembersAsync(instances, cluster.Ids, JoinTimeout, cancellationToken);
            cluster._log($"cluster of {count} formed in {clock.Elapsed.TotalSeconds:0.0} s: {string.Join(", ", instances.Select(i => $"{i.Id} pid {i.Host.ProcessId}"))}");
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>Starts one more instance (<c>&lt;app&gt;-N+1</c>) and waits until every instance lists every instance; returns it.</summary>
    public async Task<ClusterInstance> JoinAsync(CancellationToken cancellationToken = default)
    {
        string id = InstanceId(AppName, _instances.Count);
        var shm = new TempShmDirectory("faascache-cluster");
        FaaSCacheHostProcess host;
        try
        {
            host = await StartInstanceAsync(_appDirectory, _storageConnection, AppName, id, shm, _network?.Invoke(_instances.Count), cancellationToken);
        }
        catch
        {
            shm.Dispose();
            throw;
        }

        var joined = new ClusterInstance(id, host, shm);
        _instances.Add(joined);
        await host.WaitForWorkersAsync(cancellationToken: cancellationToken);
        await WaitForMembersAsync(_instances, Ids, JoinTimeout, cancellationToken);
        return joined;
    }

    /// <summary>The instance with id <paramref name="id"/>.</summary>
    public ClusterInstance Instance(string id) => _instances.Single(i => i.Id == id);

    /// <summary>The member that owns <paramref name="key"/> on the ring of <paramref name="members"/> (default: every instance).</summary>
    public string OwnerOf(string key, IEnumerable<string>? members = null) => new ConsistentHashRing(members ?? Ids, ConsistentHashRing.DefaultVirtualNodes).GetOwner(key);

    /// <summary>Waits until every one of <paramref name="observers"/> lists exactly <paramref name="expected"/>; returns how long that took.</summary>
    public async Task<TimeSpan> WaitForMembersAsync(IEnumerable<ClusterInstance> observers, IEnumerable<string> expected, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        List<ClusterInstance> watching = [.. observers];
        List<string> want = [.. expected.Order(StringComparer.Ordinal)];
        var clock = Stopwatch.StartNew();
        var seen = new Dictionary<string, string>(StringComparer.Ordinal);
        while (true)
        {
            bool all = true;
            foreach (ClusterInstance instance in watching)
            {
                HostStatus status = await instance.Host.GetStatusAsync(cancellationToken);
                seen[instance.Id] = string.Join(", ", status.MemberIds);
                all &= status.MemberIds.SequenceEqual(want);
            }

            if (all)
            {
                return clock.Elapsed;
            }

            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException(
                    $"After {timeout.TotalSeconds:0.#} s the members were not [{string.Join(", ", want)}]: " +
                    string.Join("; ", seen.Select(s => $"{s.Key} sees [{s.Value}]")));
            }

            await Task.Delay(50, cancellationToken);
        }
    }

    /// <summary>Stops every instance with SIGTERM, in parallel; one line per instance: exit code and maps left in its folder.</summary>
    public async Task<IReadOnlyList<string>> StopAsync() => await Task.WhenAll(_instances.Select(async i =>
    {
        int code = await i.Host.StopAsync();
        int left = Directory.Exists(i.MapDirectory) ? Directory.EnumerateFiles(i.MapDirectory).Count() : 0;
        return $"{i.Id}: exit code {code.ToString(CultureInfo.InvariantCulture)}, {left.ToString(CultureInfo.InvariantCulture)} maps left";
    }));

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        // How each host ended before now (null: still running, killed now).
        Dictionary<string, int?> ended = _instances.ToDictionary(i => i.Id, i => i.Host.ExitCode, StringComparer.Ordinal);
        try
        {
            await Task.WhenAll(_instances.Select(async i => await i.DisposeAsync()));
        }
        finally
        {
            foreach (ClusterInstance instance in _instances)
            {
                string end = ended[instance.Id] is int code ? $"exited with {code.ToString(CultureInfo.InvariantCulture)}" : "killed at the end";
                _log($"--- {instance.Id} (pid {instance.Host.ProcessId}, {end}) ---{Environment.NewLine}{Tail(instance.Host.Output, 40)}");
            }
        }
    }

    private static Task<FaaSCacheHostProcess> StartInstanceAsync(string appDirectory, string storageConnection, string appName, string id, TempShmDirectory shm, HostNetwork? network, CancellationToken cancellationToken)
        => FaaSCacheHostProcess.StartAsync(
            appDirectory,
            storageConnection,
            shm.Path,
            extraArgs: new Dictionary<string, string> { ["--instance-id"] = id, ["--app-name"] = appName },
            cancellationToken: cancellationToken,
            network: network);

    private static string InstanceId(string appName, int index) => $"{appName}-{(index + 1).ToString(CultureInfo.InvariantCulture)}";

    private static string Tail(string text, int lines)
    {
        string[] all = text.Split('\n');
        return string.Join('\n', all.Skip(Math.Max(0, all.Length - lines)));
    }
}

/// <summary>One host instance of a <see cref="HostProcessCluster"/>.</summary>
public sealed class ClusterInstance(string id, FaaSCacheHostProcess host, TempShmDirectory shm) : IAsyncDisposable
{
    /// <summary>Gets the instance id.</summary>
    public string Id { get; } = id;

    /// <summary>Gets the host process.</summary>
    public FaaSCacheHostProcess Host { get; } = host;

    /// <summary>Gets the shared-memory root.</summary>
    public TempShmDirectory Shm { get; } = shm;

    /// <summary>Gets the folder of this instance's shared-memory maps.</summary>
    public string MapDirectory => Path.Combine(Shm.Path, "AzureFunctions");

    /// <summary><c>POST /admin/cache/remove?key=</c>: drops <paramref name="key"/> from this instance's cache.</summary>
    public async Task RemoveFromCacheAsync(string key, CancellationToken cancellationToken = default)
    {
        using HttpResponseMessage response = await Host.Http.PostAsync($"admin/cache/remove?key={Uri.EscapeDataString(key)}", null, cancellationToken);
        response.EnsureSuccessStatusCode();
    }

    /// <inheritdoc />
    public override string ToString() => Id;

    /// <inheritdoc />
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
