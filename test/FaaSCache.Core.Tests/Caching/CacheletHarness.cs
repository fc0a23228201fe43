namespace FaaSCache.Core.Tests.Caching;

/// <summary>
/// A cachelet on its own container and a private shared-memory root: over <see cref="InMemoryBlobStore"/> for unit tests
/// (<see cref="CreateAsync"/>), or over the shared Azurite for the few that need real storage (<see cref="CreateOnAzuriteAsync"/>).
/// </summary>
internal sealed class CacheletHarness(TempShmDirectory shm, string container, IBlobStore direct, Cachelet cachelet) : IAsyncDisposable
{
    public TempShmDirectory Shm => shm;

    /// <summary>Gets the container this harness's keys live in.</summary>
    public string ContainerName => container;

    public Cachelet Cachelet => cachelet;

    public string MapDirectory => Cachelet.SharedMemory.MapDirectory;

    /// <summary>A cachelet over an in-memory store (no server: a unit test).</summary>
    public static Task<CacheletHarness> CreateAsync(
        Action<FaaSCacheOptions>? configure = null,
        IOwnerLocator? owners = null,
        TimeProvider? time = null,
        Func<IBlobStore, IBlobStore>? wrapStorage = null,
        string instanceId = "test")
    {
        var store = new InMemoryBlobStore();
        string container = "cachelet-" + Guid.NewGuid().ToString("N")[..8];
        store.CreateContainer(container);
        return Task.FromResult(Create(store, container, configure, owners, time, wrapStorage, instanceId));
    }

    /// <summary>A cachelet over a fresh container of the shared Azurite (an integration test).</summary>
    public static async Task<CacheletHarness> CreateOnAzuriteAsync(AzuriteFixture azurite, Action<FaaSCacheOptions>? configure = null)
    {
        string container = (await azurite.CreateContainerAsync("cachelet")).Name;
        return Create(AzureBlobStore.FromConnectionString(azurite.ConnectionString), container, configure, null, null, null, "test");
    }

    public string Key(string name) => $"{ContainerName}/{name}";

    /// <summary>Writes a blob behind the cache's back; returns its ETag.</summary>
    public Task<string> UploadDirectAsync(string name, byte[] content) => direct.UploadAsync(Key(name), new MemoryStream(content));

    /// <summary>Reads a blob behind the cache's back; null when it does not exist.</summary>
    public async Task<byte[]?> DownloadDirectAsync(string name)
    {
        try
        {
            FetchResult<byte[]> fetched = await direct.FetchAsync(Key(name), null, async (length, _, content, token) =>
            {
                var bytes = new byte[length];
                await content.ReadExactlyAsync(bytes, token);
                return bytes;
            });
            return fetched.Value;
        }
        catch (BlobNotFoundException)
        {
            return null;
        }
    }

    /// <summary>Storage's version of a blob, or null.</summary>
    public Task<string?> VersionAsync(string name) => direct.GetVersionAsync(Key(name));

    /// <summary>Deletes a blob behind the cache's back.</summary>
    public Task<bool> DeleteDirectAsync(string name) => direct.DeleteAsync(Key(name));

    public string[] MapFiles() => Directory.GetFiles(MapDirectory);

    public async ValueTask DisposeAsync()
    {
        await Cachelet.DisposeAsync();
        Shm.Dispose();
    }

    public static byte[] RandomBytes(int length, int seed = 1)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static CacheletHarness Create(
        IBlobStore direct,
        string container,
        Action<FaaSCacheOptions>? configure,
        IOwnerLocator? owners,
        TimeProvider? time,
        Func<IBlobStore, IBlobStore>? wrapStorage,
        string instanceId)
    {
        var options = new FaaSCacheOptions { CapacityBytes = 64L << 20 };
        configure?.Invoke(options);
        var shm = new TempShmDirectory();
        IBlobStore storage = wrapStorage?.Invoke(direct) ?? direct;
        var builder = new CacheletBuilder(instanceId, [shm.Path]).WithOptions(options).WithStorage(storage);
        if (owners is not null)
        {
            builder.WithOwners(owners);
        }

        if (time is not null)
        {
            builder.WithTime(time);
        }

        Cachelet cachelet = builder.Build();
        return new CacheletHarness(shm, container, direct, cachelet);
    }
}
