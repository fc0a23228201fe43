namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>Part 5: the shared-memory directories' own limits, on small tmpfs mounts the tests make (needs root).</summary>
[Trait("Category", "Integration")]
public sealed class SharedMemoryDirectoryLimitTests
{
    private const int MiB = 1 << 20;

    [Fact]
    public async Task The_cache_keeps_within_a_small_directory_by_evicting_though_its_capacity_is_larger()
    {
        using var tmpfs = new TmpfsMount(8);
        var storage = Storage(out string[] keys, 4, 3 * MiB);
        await using (Cachelet cachelet = new CacheletBuilder("small", [tmpfs.Path]).WithOptions(Options()).WithStorage(storage).Build())
        {
            foreach (string key in keys)
            {
                using ObjectLease lease = await cachelet.ReadAsync(key);
                Assert.True(lease.IsCached);
                Assert.Equal(storage.Get(key), lease.Span.ToArray());
            }

            Assert.True(cachelet.BytesCached <= 8 * MiB);
            Assert.Equal(2, cachelet.Count);
            Assert.Equal(2, cachelet.Metrics.Snapshot().Evictions);
            Assert.Equal(2, Directory.GetFiles(tmpfs.MapDirectory).Length);
        }
    }

    [Fact]
    public async Task Maps_go_to_the_next_directory_when_the_first_fills()
    {
        using var first = new TmpfsMount(8);
        using var second = new TmpfsMount(8);
        var storage = Storage(out string[] keys, 4, 3 * MiB);
        await using Cachelet cachelet = new CacheletBuilder("two", [first.Path, second.Path]).WithOptions(Options()).WithStorage(storage).Build();

        foreach (string key in keys)
        {
            (await cachelet.ReadAsync(key)).Dispose();
        }

        Assert.Equal(4, cachelet.Count);
        Assert.Equal(0, cachelet.Metrics.Snapshot().Evictions);
        Assert.Equal(2, Directory.GetFiles(first.MapDirectory).Length);
        Assert.Equal(2, Directory.GetFiles(second.MapDirectory).Length);
    }

    [Fact]
    public async Task A_read_is_served_without_caching_when_no_directory_has_room()
    {
        using var tmpfs = new TmpfsMount(8);
        var storage = Storage(out string[] keys, 2, 5 * MiB);
        await using Cachelet cachelet = new CacheletBuilder("full", [tmpfs.Path]).WithOptions(Options()).WithStorage(storage).Build();
        using ObjectLease held = await cachelet.ReadAsync(keys[0]); // in use: cannot be evicted

        string spilledPath;
        using (ObjectLease second = await cachelet.ReadAsync(keys[1]))
        {
            Assert.False(second.IsCached);
            Assert.False(second.InSharedMemory);
            Assert.Equal(storage.Get(keys[1]), second.Span.ToArray());
            spilledPath = second.MapPath;
            Assert.StartsWith(cachelet.SharedMemory.SpillDirectory, spilledPath, StringComparison.Ordinal);
        }

        Assert.False(File.Exists(spilledPath));
        Assert.Equal(1, cachelet.SharedMemory.SpilledMaps);
        Assert.True(held.IsCached && held.InSharedMemory);
        held.Dispose();
        await cachelet.DisposeAsync();
        Assert.False(Directory.Exists(cachelet.SharedMemory.SpillDirectory));
    }

    [Fact]
    public async Task A_small_map_that_does_not_fit_the_full_first_directory_skips_the_pool_and_goes_to_the_next()
    {
        using var first = new TmpfsMount(1);
        using var second = new TempShmDirectory();
        using var store = new SharedMemoryStore("tight", [first.Path, second.Path]);
        await store.PoolRefill;
        using SharedMemoryMap big = store.Create(SharedMemoryStore.FreeBytes(store.MapDirectory) - (40 * 1024) - SharedMemoryMap.HeaderSize);

        using SharedMemoryMap tooBig = store.Create(64 * 1024);
        using SharedMemoryMap fits = store.Create(1000);
        fits.Content.Fill(5); // allocated up front: no SIGBUS

        Assert.Equal(Path.Combine(second.Path, "AzureFunctions", tooBig.Name), tooBig.FilePath);
        Assert.Equal(Path.Combine(store.MapDirectory, fits.Name), fits.FilePath);
        Assert.Equal(1, store.PooledCreates);
        Assert.Equal(0, store.SpilledMaps);
        Assert.True(fits.IsShared && tooBig.IsShared);
    }

    [Fact]
    public void A_missing_or_read_only_directory_is_named_in_one_start_up_line_and_skipped()
    {
        using var readOnly = new TmpfsMount(1, readOnly: true);
        using var good = new TempShmDirectory();
        string missing = Path.Combine(Path.GetTempPath(), "faascache-missing-" + Guid.NewGuid().ToString("N"));
        var log = new LineLogger();

        using var store = new SharedMemoryStore("named", [missing, readOnly.Path, good.Path], log);

        Assert.Equal([Path.Combine(good.Path, "AzureFunctions")], store.MapDirectories);
        Assert.Equal(2, store.UnusableDirectories.Count);
        string line = Assert.Single(log.Warnings);
        Assert.Contains($"'{missing}' does not exist", line, StringComparison.Ordinal);
        Assert.Contains($"'{readOnly.Path}' is not writable", line, StringComparison.Ordinal);
        Assert.Contains(SharedMemoryStore.DirectoriesSetting, line, StringComparison.Ordinal);
        Assert.False(Directory.Exists(missing));
    }

    [Fact]
    public void No_usable_directory_at_all_fails_start_up_naming_each()
    {
        string missing = Path.Combine(Path.GetTempPath(), "faascache-missing-" + Guid.NewGuid().ToString("N"));

        var e = Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("none", [missing]));

        Assert.Contains($"'{missing}' does not exist", e.Message, StringComparison.Ordinal);
    }

    private static FaaSCacheOptions Options() => new() { Consistency = ConsistencyPreset.Local, CapacityBytes = 64L * MiB };

    private static InMemoryBlobStore Storage(out string[] keys, int count, int size)
    {
        var storage = new InMemoryBlobStore();
        storage.CreateContainer("shm");
        keys = [.. Enumerable.Range(0, count).Select(i => $"shm/object-{i}")];
        foreach (string key in keys)
        {
            var bytes = new byte[size];
            new Random(key.GetHashCode(StringComparison.Ordinal)).NextBytes(bytes);
            storage.Put(key, bytes);
        }

        return storage;
    }
}
