namespace FaaSCache.Core.Tests.Hosting;

/// <summary>The one way tests, benchmarks and the demo build a cachelet: through AddFaaSCache, what it is given winning.</summary>
[Trait("Category", "Unit")]
public sealed class CacheletBuilderTests
{
    [Fact]
    public async Task The_given_store_and_options_win_and_disposing_the_cachelet_removes_its_maps()
    {
        using var shm = new TempShmDirectory();
        var storage = new InMemoryBlobStore();
        await storage.UploadAsync("cfg/a.bin", new MemoryStream(Encoding.ASCII.GetBytes("hello")), writeId: null);
        string mapDirectory;
        await using (Cachelet cachelet = new CacheletBuilder("builder-1", [shm.Path])
            .Configure(o => o.Consistency = ConsistencyPreset.Local)
            .WithStorage(storage)
            .Build())
        {
            using (ObjectLease miss = await cachelet.ReadAsync("cfg/a.bin"))
            {
                Assert.Equal(ReadSource.LocalMiss, miss.Source);
            }

            using (ObjectLease hit = await cachelet.ReadAsync("cfg/a.bin"))
            {
                Assert.Equal(ReadSource.LocalHit, hit.Source);
                Assert.Equal("hello", Encoding.ASCII.GetString(hit.Span));
            }

            Assert.Equal(1, storage.BodiesServed);
            mapDirectory = cachelet.SharedMemory.MapDirectory;
            Assert.NotEmpty(Directory.GetFiles(mapDirectory));
        }

        Assert.True(!Directory.Exists(mapDirectory) || Directory.GetFiles(mapDirectory).Length == 0, "the cachelet's maps outlived it");
    }

    [Fact]
    public void Bad_options_are_refused_when_built_naming_the_key()
    {
        using var shm = new TempShmDirectory();
        var builder = new CacheletBuilder("builder-2", [shm.Path]).Configure(o => o.CapacityBytes = 10).WithStorage(new InMemoryBlobStore());

        FaaSCacheConfigurationException e = Assert.Throws<FaaSCacheConfigurationException>(builder.Build);

        Assert.Contains("capacityBytes", e.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(builder.Build);
    }
}
