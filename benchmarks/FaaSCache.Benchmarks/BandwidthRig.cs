using System.Net.Http.Json;
using Azure.Storage.Blobs.Models;
using FaaSCache.Host.Admin;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The bandwidth-scaling rig: Azurite in the root namespace listening on every address, one network namespace per host
/// instance whose link is shaped (§6: 90 MB/s to storage), and a host cluster whose instance i runs in namespace i and
/// reaches Azurite through its own link. Dispose stops the hosts, removes the namespaces (killing anything left in them)
/// and Azurite's data; a run killed before that is cleaned up by the next one (<see cref="NetworkNamespace.CleanupAsync"/>).
/// </summary>
internal sealed class BandwidthRig : IAsyncDisposable
{
    /// <summary>The namespaces' prefix: namespaces fcbw-&lt;index&gt;, interfaces fcbwv&lt;index&gt;[abi].</summary>
    public const string Prefix = "fcbw";

    /// <summary>The container the measured blobs go to.</summary>
    public const string ContainerName = "bandwidth-scaling";

    // Indices 200-254 are the network tests' (TestNetwork); the rig takes free ones from 100 up.
    private const int FirstIndex = 100;

    /// <summary>The instances' <c>scaling.profileInterval</c>: how stale BW_BS / BW_Inst may get before a probe.</summary>
    public static readonly TimeSpan ProfileInterval = TimeSpan.FromSeconds(15);

    private const int LastIndex = 199;
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private readonly List<NetworkNamespace> _namespaces = [];
    private readonly List<int> _indices = [];
    private readonly ShapedLinkOptions _link;
    private readonly TextWriter _output;
    private FunctionAppFolder? _app;
    private int _nameCounter;

    private BandwidthRig(AzuriteServer azurite, ShapedLinkOptions link, TextWriter output)
    {
        Azurite = azurite;
        _link = link;
        _output = output;
        // Pooled connections are dropped after 2 s idle, before Azurite's (Node's) 5 s keep-alive closes them: the
        // benchmark's uploads come after long pauses (instances starting, cold reads), and two full runs had one upload's
        // requests reset by Azurite six times in a row on connections it had closed.
        Container = azurite.CreateServiceClient(o => o.Transport = new Azure.Core.Pipeline.HttpClientTransport(new SocketsHttpHandler { PooledConnectionIdleTimeout = TimeSpan.FromSeconds(2) }))
            .GetBlobContainerClient(ContainerName);
    }

    /// <summary>Gets Azurite (root namespace, all addresses).</summary>
    public AzuriteServer Azurite { get; }

    /// <summary>Gets the container of the measured blobs, reached over loopback (unshaped: uploads are not measured).</summary>
    public BlobContainerClient Container { get; }

    /// <summary>Gets the app folder every instance runs (benchmarks/apps/counter, consistency local), once a cluster started.</summary>
    public string AppDirectory => _app?.Path ?? throw new InvalidOperationException("no app copied yet");

    /// <summary>Gets the running cluster, once <see cref="StartClusterAsync"/> ran.</summary>
    public HostProcessCluster? Cluster { get; private set; }

    /// <summary>Removes what a killed run left, starts Azurite on 0.0.0.0 and the container.</summary>
    public static async Task<BandwidthRig> StartAsync(ShapedLinkOptions link, TextWriter output, CancellationToken cancellationToken)
    {
        if (!NetworkNamespace.IsSupported(out string why))
        {
            throw new InvalidOperationException($"bandwidth-scaling needs network namespaces with shaped links: {why}");
        }

        await NetworkNamespace.CleanupAsync(Prefix);
        AzuriteServer azurite = await AzuriteServer.StartAsync("0.0.0.0", cancellationToken);
        var rig = new BandwidthRig(azurite, link, output);
        try
        {
            await rig.Container.CreateIfNotExistsAsync(cancellationToken: cancellationToken);
            output.WriteLine($"azurite {AzuriteServer.InstalledVersion()}: listening on 0.0.0.0:{azurite.Port.ToString(Invariant)} (pid {azurite.ProcessId.ToString(Invariant)}, data in {azurite.DataDirectory})");
            return rig;
        }
        catch
        {
            await rig.DisposeAsync();
            throw;
        }
    }

    /// <summary>Makes namespaces 0..count-1 (as needed) and starts <paramref name="count"/> host instances, one in each.</summary>
    public async Task<HostProcessCluster> StartClusterAsync(string appName, int count, CancellationToken cancellationToken)
    {
        _app ??= BenchAppFolder.Copy("counter", json =>
        {
            BenchAppFolder.SetFaaSCache(json, "consistency", "local");
            // Re-probe BW_Inst every 15 s when no transfer measured it (probes compete with the measured reads, so not more often): the first probe runs as the instances
            // start (JIT, the others' start-up) and would otherwise be the planner's BW_Inst for the default 5 minutes.
            BenchAppFolder.SetFaaSCache(json, "scaling", new System.Text.Json.Nodes.JsonObject { ["profileInterval"] = ProfileInterval.ToString() });
        });
        await EnsureNamespacesAsync(count, cancellationToken);
        Cluster = await HostProcessCluster.StartAsync(
            _app.Path,
            Azurite.ConnectionString,
            appName,
            count,
            log: null,
            network: i => Placement(_namespaces[i]),
            cancellationToken: cancellationToken);
        return Cluster;
    }

    /// <summary>Starts one more instance in the next namespace and waits until every instance lists it.</summary>
    public async Task<ClusterInstance> JoinAsync(CancellationToken cancellationToken)
    {
        HostProcessCluster cluster = Cluster ?? throw new InvalidOperationException("no cluster runs");
        await EnsureNamespacesAsync(cluster.Instances.Count + 1, cancellationToken);
        return await cluster.JoinAsync(cancellationToken);
    }

    /// <summary>Gets namespace <paramref name="i"/> (instance i's).</summary>
    public NetworkNamespace Namespace(int i) => _namespaces[i];

    /// <summary>Makes namespaces until there are <paramref name="count"/>.</summary>
    public async Task EnsureNamespacesAsync(int count, CancellationToken cancellationToken)
    {
        while (_namespaces.Count < count)
        {
            int index = FreeIndex(RootAddresses());
            NetworkNamespace made = await NetworkNamespace.CreateAsync(Prefix, index, _link, cancellationToken);
            _namespaces.Add(made);
            _indices.Add(index);
            _output.WriteLine($"namespace {made}");
        }
    }

    /// <summary>Where instance <paramref name="network"/>'s host runs: inside it, listening on its address, Azurite over its link.</summary>
    public HostNetwork Placement(NetworkNamespace network) =>
        new(network.InstanceAddress, network.Wrap, Azurite.ConnectionStringAt(network.HostAddress));

    /// <summary>
    /// Uploads <paramref name="content"/> under a new name owned by <paramref name="owner"/> on the ring of
    /// <paramref name="members"/>, with the whole-object XxHash3 in its metadata as the cachelet's own uploads have it;
    /// returns the key (container/blob).
    /// </summary>
    public async Task<string> UploadFreshAsync(BinaryData content, string checksum, string owner, IReadOnlyList<string> members, CancellationToken cancellationToken)
    {
        var ring = new ConsistentHashRing(members, ConsistentHashRing.DefaultVirtualNodes);
        string name;
        do
        {
            name = string.Create(Invariant, $"object-{content.ToMemory().Length}-{_nameCounter++}");
        }
        while (ring.GetOwner($"{ContainerName}/{name}") != owner);

        // In 8 MiB blocks, two at a time; a failed upload (not measured) is made again after a pause, said in the output.
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                await Container.GetBlobClient(name).UploadAsync(content, new BlobUploadOptions
                {
                    Metadata = new Dictionary<string, string> { [IBlobStore.XxHash3Metadata] = checksum },
                    TransferOptions = new Azure.Storage.StorageTransferOptions { InitialTransferSize = 8 << 20, MaximumTransferSize = 8 << 20, MaximumConcurrency = 2 },
                }, cancellationToken);
                break;
            }
            catch (Exception e) when (attempt < 3 && e is Azure.RequestFailedException or AggregateException)
            {
                _output.WriteLine($"upload of {name} failed ({e.GetBaseException().Message}); again in 5 s (attempt {attempt + 1} of 3)");
                await Task.Delay(TimeSpan.FromSeconds(5), cancellationToken);
            }
        }

        return $"{ContainerName}/{name}";
    }

    /// <summary>Drops <paramref name="key"/> from the cache of the instance at <paramref name="http"/> and deletes the blob (Azurite's disk stays small).</summary>
    public async Task ForgetAsync(HttpClient http, string key, CancellationToken cancellationToken)
    {
        using HttpResponseMessage response = await http.PostAsync(new Uri($"admin/cache/remove?key={Uri.EscapeDataString(key)}", UriKind.Relative), null, cancellationToken);
        response.EnsureSuccessStatusCode();
        await Container.GetBlobClient(key[(ContainerName.Length + 1)..]).DeleteIfExistsAsync(cancellationToken: cancellationToken);
    }

    /// <summary><c>POST /admin/cache/read</c> on the instance at <paramref name="http"/>: one timed read; <paramref name="instances"/> forces N.</summary>
    public static async Task<HostCacheRead> ReadAsync(HttpClient http, string key, int? instances, CancellationToken cancellationToken)
    {
        string query = $"admin/cache/read?key={Uri.EscapeDataString(key)}" + (instances is { } n ? string.Create(Invariant, $"&instances={n}") : string.Empty);
        using HttpResponseMessage response = await http.PostAsync(new Uri(query, UriKind.Relative), null, cancellationToken);
        string body = await response.Content.ReadAsStringAsync(cancellationToken);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"{http.BaseAddress}: POST /admin/cache/read answered {(int)response.StatusCode}: {body}");
        }

        HostCacheRead read = (await response.Content.ReadFromJsonAsync<HostCacheRead>(cancellationToken))!;
        return read.Source == "lm"
            ? read
            : throw new NotFreshMissException($"{http.BaseAddress}: {key} was expected to be a fresh miss but was a {read.Source}: {body}");
    }

    /// <summary>A timed read that was not the fresh local miss it had to be (another instance owned the key by then).</summary>
    public sealed class NotFreshMissException(string message) : InvalidOperationException(message);

    /// <summary><c>POST /admin/host/scale/status</c>: the measured transfer profile of the instance at <paramref name="http"/>.</summary>
    public static async Task<HostTransferProfile> ProfileAsync(HttpClient http, int workerCount, CancellationToken cancellationToken)
    {
        using HttpResponseMessage response = await http.PostAsJsonAsync("admin/host/scale/status", new HostScaleStatusRequest(workerCount), cancellationToken);
        response.EnsureSuccessStatusCode();
        return (await response.Content.ReadFromJsonAsync<HostScaleStatus>(cancellationToken))!.Profile;
    }

    /// <summary>Stops the cluster (SIGTERM, then kill) if one runs.</summary>
    public async Task StopClusterAsync()
    {
        if (Cluster is { } cluster)
        {
            Cluster = null;
            try
            {
                IReadOnlyList<string> stopped = await cluster.StopAsync();
                _output.WriteLine($"hosts stopped: {string.Join("; ", stopped)}");
            }
            finally
            {
                await cluster.DisposeAsync();
            }
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        var errors = new List<Exception>();
        try
        {
            if (Cluster is { } cluster)
            {
                Cluster = null;
                await cluster.DisposeAsync();
            }
        }
        catch (Exception e)
        {
            errors.Add(e);
        }

        foreach (NetworkNamespace network in _namespaces)
        {
            try
            {
                await network.DisposeAsync();
            }
            catch (NetworkEmulationException e)
            {
                errors.Add(e);
            }
        }

        _namespaces.Clear();
        _app?.Dispose();
        await Azurite.DisposeAsync();
        if (errors.Count > 0)
        {
            throw new AggregateException("cleaning up the bandwidth rig failed", errors);
        }
    }

    /// <summary>The IPv4 addresses of this (the root) namespace's interfaces, where every link's root end has its .1.</summary>
    private static HashSet<string> RootAddresses() =>
        [.. System.Net.NetworkInformation.NetworkInterface.GetAllNetworkInterfaces()
            .SelectMany(i => i.GetIPProperties().UnicastAddresses)
            .Select(a => a.Address.ToString())];

    private int FreeIndex(HashSet<string> addresses)
    {
        for (int index = FirstIndex; index <= LastIndex; index++)
        {
            if (!_indices.Contains(index) && !addresses.Contains(string.Create(Invariant, $"10.250.{index}.1")))
            {
                return index;
            }
        }

        throw new InvalidOperationException($"no free link index between {FirstIndex} and {LastIndex} (10.250.<index>.0/30 all taken)");
    }
}
