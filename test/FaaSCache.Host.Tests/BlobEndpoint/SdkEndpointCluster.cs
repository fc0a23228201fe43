using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Peers;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Instances of one app as one cache, in this process, each with its SDK endpoint: a real cachelet each (a private
/// shared-memory root), its peer service on a real gRPC port (<see cref="PeerServerHost"/>, <see cref="GrpcPeerClient"/>
/// between them, owners on one ring), and <see cref="BlobEndpointHosting.StartAsync"/> on a loopback port of its own,
/// all over the collection's Azurite. SDK clients reach each instance's endpoint over real HTTP.
/// </summary>
internal sealed class SdkEndpointCluster : IAsyncDisposable
{
    private readonly List<Member> _members = [];
    private readonly Directory _directory = new();

    private SdkEndpointCluster(AzuriteFixture azurite, string app)
    {
        Azurite = azurite;
        Key = PeerKey.FromConnectionString(azurite.ConnectionString, app);
    }

    public AzuriteFixture Azurite { get; }

    public PeerKey Key { get; }

    public IReadOnlyList<string> Ids => [.. _members.Select(m => m.Id)];

    /// <summary>Starts <paramref name="count"/> instances under <paramref name="preset"/> (a host.json name) as one cache.</summary>
    public static async Task<SdkEndpointCluster> StartAsync(AzuriteFixture azurite, string preset, int count = 2)
    {
        string app = "sdkc-" + Guid.NewGuid().ToString("N")[..8];
        string[] ids = [.. Enumerable.Range(1, count).Select(i => $"{app}-{i.ToString(CultureInfo.InvariantCulture)}")];
        var cluster = new SdkEndpointCluster(azurite, app);
        try
        {
            foreach (string id in ids)
            {
                var member = new Member(id, new TempShmDirectory(), new GrpcPeerClient(cluster._directory, cluster.Key));
                cluster._members.Add(member);
                member.Cachelet = new CacheletBuilder(id, [member.Shm.Path])
                    .WithOptions(new FaaSCacheOptions { Consistency = Enum.Parse<ConsistencyPreset>(preset, ignoreCase: true) })
                    .WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString))
                    .WithOwners(new RingOwnerLocator(id, ids))
                    .WithPeers(member.Client)
                    .Build();
                int port = FreePorts.Get();
                member.Peers = new PeerServerHost(member.Cachelet, cluster.Key, new IPEndPoint(IPAddress.Loopback, port));
                await member.Peers.StartAsync(CancellationToken.None);
                cluster._directory.Set(id, new Uri($"http://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}/"));
                member.Endpoint = await BlobEndpointHosting.StartAsync(member.Cachelet, azurite.ConnectionString);
            }
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }

        return cluster;
    }

    /// <summary>The cachelet of instance <paramref name="index"/>.</summary>
    public Cachelet Cachelet(int index) => _members[index].Cachelet!;

    /// <summary>The SDK endpoint of instance <paramref name="index"/>.</summary>
    public SdkEndpointServer Endpoint(int index) => _members[index].Endpoint!;

    /// <summary>The index of the instance that owns <paramref name="key"/>.</summary>
    public int OwnerOf(string key) => _members.FindIndex(m => m.Id == new ConsistentHashRing(Ids).GetOwner(key));

    /// <summary>A blob name (<paramref name="prefix"/>k) whose key in <paramref name="container"/> instance <paramref name="index"/> owns.</summary>
    public string NameOwnedBy(int index, string container, string prefix)
        => Enumerable.Range(0, 10_000).Select(k => $"{prefix}{k.ToString(CultureInfo.InvariantCulture)}").First(n => OwnerOf($"{container}/{n}") == index);

    /// <summary>A client through instance <paramref name="index"/>'s endpoint, as a function there builds one (no retries: each answer is the endpoint's).</summary>
    public BlobServiceClient ViaEndpoint(int index)
    {
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05);
        options.Retry.MaxRetries = 0;
        return new BlobServiceClient(Endpoint(index).ConnectionString, options);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (Member member in _members)
        {
            if (member.Endpoint is not null)
            {
                await member.Endpoint.DisposeAsync();
            }

            if (member.Peers is not null)
            {
                await member.Peers.DisposeAsync();
            }
        }

        foreach (Member member in _members)
        {
            member.Client.Dispose();
            if (member.Cachelet is not null)
            {
                await member.Cachelet.DisposeAsync();
            }

            member.Shm.Dispose();
        }
    }

    private sealed class Member(string id, TempShmDirectory shm, GrpcPeerClient client)
    {
        public string Id => id;

        public TempShmDirectory Shm => shm;

        public GrpcPeerClient Client => client;

        public Cachelet? Cachelet { get; set; }

        public PeerServerHost? Peers { get; set; }

        public SdkEndpointServer? Endpoint { get; set; }
    }

    /// <summary>Where each instance's peer service listens (what the membership list says in a host).</summary>
    private sealed class Directory : IPeerDirectory
    {
        private readonly ConcurrentDictionary<string, Uri> _endpoints = new(StringComparer.Ordinal);

        public void Set(string id, Uri endpoint) => _endpoints[id] = endpoint;

        public bool TryGetEndpoint(string memberId, out Uri endpoint) => _endpoints.TryGetValue(memberId, out endpoint!);
    }
}
