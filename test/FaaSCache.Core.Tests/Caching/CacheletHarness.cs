using Azure.Storage.Blobs;
using FaaSCache.Caching;
using FaaSCache.Membership;
using FaaSCache.Ownership;
using FaaSCache.Options;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using FaaSCache.TestSupport;

namespace FaaSCache.Core.Tests.Caching;

/// <summary>A cachelet on a fresh container of the shared Azurite and a private shared-memory root.</summary>
internal sealed class CacheletHarness : IAsyncDisposable
{
    private CacheletHarness(TempShmDirectory shm, BlobContainerClient container, Cachelet cachelet)
    {
        Shm = shm;
        Container = container;
        Cachelet = cachelet;
    }

    public TempShmDirectory Shm { get; }

    public BlobContainerClient Container { get; }

    public Cachelet Cachelet { get; }

    public string MapDirectory => Cachelet.SharedMemory.MapDirectory;

    public static async Task<CacheletHarness> CreateAsync(
        AzuriteFixture azurite,
        Action<FaaSCacheOptions>? configure = null,
        IOwnerLocator? owners = null,
        TimeProvider? time = null,
        Func<IBlobStore, IBlobStore>? wrapStorage = null,
        string instanceId = "test")
    {
        var options = new FaaSCacheOptions { CapacityBytes = 64L << 20 };
        configure?.Invoke(options);
        var shm = new TempShmDirectory();
        BlobContainerClient container = await azurite.CreateContainerAsync("cachelet");
        IBlobStore storage = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        storage = wrapStorage?.Invoke(storage) ?? storage;
        var cachelet = new Cachelet(options, storage, new SharedMemoryStore(instanceId, [shm.Path]), owners, time);
        return new CacheletHarness(shm, container, cachelet);
    }

    public string Key(string name) => $"{Container.Name}/{name}";

    public async Task<string> UploadDirectAsync(string name, byte[] content)
        => (await Container.GetBlobClient(name).UploadAsync(new BinaryData(content), overwrite: true)).Value.ETag.ToString();

    public async Task<byte[]?> DownloadDirectAsync(string name)
    {
        BlobClient blob = Container.GetBlobClient(name);
        if (!(await blob.ExistsAsync()).Value)
        {
            return null;
        }

        return (await blob.DownloadContentAsync()).Value.Content.ToArray();
    }

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
}
