namespace FaaSCache.Peers.Tests;

/// <summary>
/// Real cachelets (one Azurite container, a private shared-memory root each) that talk over real gRPC:
/// each member serves its peer service on a Kestrel port and reads from the others with a <see cref="GrpcPeerClient"/>.
/// </summary>
internal sealed class PeerCluster : IAsyncDisposable
{
    public const string App = "peer-tests-app";

    private readonly Dictionary<string, Member> _members = new(StringComparer.Ordinal);
    private readonly List<GrpcPeerClient> _extraClients = [];
    private readonly AzuriteFixture _azurite;

    private PeerCluster(AzuriteFixture azurite, BlobContainerClient container)
    {
        _azurite = azurite;
        Container = container;
        Key = PeerKey.FromConnectionString(azurite.ConnectionString, App);
    }

    public PeerKey Key { get; }

    public StaticPeerDirectory Directory { get; } = new();

    public BlobContainerClient Container { get; }

    public Cachelet this[string id] => _members[id].Cachelet;

    public static async Task<PeerCluster> StartAsync(
        AzuriteFixture azurite,
        ConsistencyPreset preset = ConsistencyPreset.OwnerLocalRead,
        string[]? members = null,
        Func<string, Action<IServiceCollection>?>? configureServer = null,
        Func<string, IBlobStore, IBlobStore>? wrapStorage = null,
        long capacityBytes = 128L << 20,
        Action<FaaSCacheOptions>? configure = null)
    {
        members ??= ["a", "b"];
        var cluster = new PeerCluster(azurite, await azurite.CreateContainerAsync("peers"));
        try
        {
            foreach (string id in members)
            {
                var options = new FaaSCacheOptions { Consistency = preset, CapacityBytes = capacityBytes };
                configure?.Invoke(options);
                IBlobStore storage = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
                storage = wrapStorage?.Invoke(id, storage) ?? storage;
                var shm = new TempShmDirectory();
                var ring = new RingOwnerLocator(id, members);
                var client = new GrpcPeerClient(cluster.Directory, cluster.Key);
                Cachelet cachelet = new CacheletBuilder(id, [shm.Path]).WithOptions(options).WithStorage(storage).WithOwners(ring).WithPeers(client).Build();
                var member = new Member(cachelet, ring, shm, client);
                cluster._members[id] = member;
                member.Server = await PeerServer.StartAsync(cachelet, cluster.Key, configureServer?.Invoke(id));
                cluster.Directory.Set(id, member.Server.Endpoint);
            }
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }

        return cluster;
    }

    public GrpcPeerClient Client(string id) => _members[id].Client;

    /// <summary>The owner ring of <paramref name="id"/> (what its membership daemon would update).</summary>
    public RingOwnerLocator Ring(string id) => _members[id].Ring;

    public PeerServer Server(string id) => _members[id].Server!;

    /// <summary>A client of the cluster's directory with its own key (e.g. another app's).</summary>
    public GrpcPeerClient NewClient(PeerKey key, PeerClientOptions? options = null)
    {
        var client = new GrpcPeerClient(Directory, key, options);
        _extraClients.Add(client);
        return client;
    }

    public string MapDirectory(string id) => _members[id].Cachelet.SharedMemory.MapDirectory;

    public string[] MapFiles(string id) => System.IO.Directory.GetFiles(MapDirectory(id));

    public string KeyOwnedBy(string member, string prefix = "k")
    {
        ConsistentHashRing ring = _members[member].Ring.Current;
        return Enumerable.Range(0, 10_000).Select(i => $"{Container.Name}/{prefix}{i}").First(k => ring.GetOwner(k) == member);
    }

    public async Task<string> UploadAsync(string key, byte[] content)
        => (await Container.GetBlobClient(BlobKey.Parse(key).BlobName).UploadAsync(new BinaryData(content), overwrite: true)).Value.ETag.ToString();

    public async Task<byte[]?> DownloadAsync(string key)
    {
        BlobClient blob = Container.GetBlobClient(BlobKey.Parse(key).BlobName);
        return (await blob.ExistsAsync()).Value ? (await blob.DownloadContentAsync()).Value.Content.ToArray() : null;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (Member member in _members.Values)
        {
            if (member.Server is not null)
            {
                await member.Server.DisposeAsync();
            }
        }

        foreach (Member member in _members.Values)
        {
            member.Client.Dispose();
            await member.Cachelet.DisposeAsync();
            member.Shm.Dispose();
        }

        foreach (GrpcPeerClient client in _extraClients)
        {
            client.Dispose();
        }
    }

    public static byte[] RandomBytes(int length, int seed = 1)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private sealed record Member(Cachelet Cachelet, RingOwnerLocator Ring, TempShmDirectory Shm, GrpcPeerClient Client)
    {
        public PeerServer? Server { get; set; }
    }
}
