namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>
/// One app's storage in memory and any number of its instances, each a real cachelet on a real ring with its own
/// shared-memory directory, snapshot store and Load Daemon.
/// </summary>
internal sealed class PrewarmHarness : IAsyncDisposable
{
    public const string App = "amber";
    private readonly List<IAsyncDisposable> _owned = [];

    public PrewarmHarness()
    {
        Storage.CreateContainer(Container);
    }

    public InMemoryBlobStore Storage { get; } = new();

    public FakeTimeProvider Time { get; } = new(new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero));

    public string Container { get; } = "data";

    public SnapshotStore Snapshots => new(Storage, App);

    public string Key(string name) => $"{Container}/{name}";

    public Task<string> UploadAsync(string name, int length, int seed = 1)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return Storage.UploadAsync(Key(name), new MemoryStream(bytes));
    }

    /// <summary>Writes a snapshot <paramref name="ago"/> before now in which each key was missed once.</summary>
    public Task WriteMissSnapshotAsync(TimeSpan ago, string instance, params (string Key, long Size, string? Version)[] objects) =>
        Snapshots.WriteAsync(new UnloadSnapshot
        {
            AppName = App,
            InstanceId = instance,
            TakenAt = Time.GetUtcNow() - ago,
            Entries = [.. objects.Select(o => new SnapshotEntry { Key = o.Key, SizeBytes = o.Size, Version = o.Version, OwnMisses = 1, LastAccess = Time.GetUtcNow() - ago })],
        });

    /// <summary>An instance of the app: <paramref name="self"/> among <paramref name="members"/>.</summary>
    public Instance CreateInstance(
        string self,
        string[]? members = null,
        Action<FaaSCacheOptions>? configure = null,
        IInvocationActivity? invocations = null,
        Func<IBlobStore, IBlobStore>? wrapStorage = null,
        TimeSpan handOffWait = default)
    {
        var options = new FaaSCacheOptions { CapacityBytes = 64L << 20, Consistency = ConsistencyPreset.Local };
        configure?.Invoke(options);
        var shm = new TempShmDirectory();
        IBlobStore storage = wrapStorage?.Invoke(Storage) ?? Storage;
        var owners = new RingOwnerLocator(self, members ?? [self]);
        Cachelet cachelet = new CacheletBuilder(self, [shm.Path]).WithOptions(options).WithStorage(storage).WithOwners(owners).WithTime(Time).Build();
        var daemon = new LoadDaemon(cachelet, new SnapshotStore(storage, App), owners, invocations, Time) { HandOffWait = handOffWait };
        var instance = new Instance(cachelet, daemon, owners, shm);
        _owned.Add(instance);
        return instance;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (IAsyncDisposable d in _owned)
        {
            await d.DisposeAsync();
        }
    }

    internal sealed record Instance(Cachelet Cachelet, LoadDaemon Daemon, RingOwnerLocator Owners, TempShmDirectory Shm) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            Daemon.Dispose();
            await Cachelet.DisposeAsync();
            Shm.Dispose();
        }
    }
}
