namespace FaaSCache.Core.Tests.Caching;

/// <summary>A read and a write of one key that overlap: the read may return either version, the cache keeps the write's.</summary>
[Trait("Category", "Unit")]
public sealed class CacheletOverlapTests
{
    [Theory]
    [InlineData(ConsistencyPreset.Owner)]
    [InlineData(ConsistencyPreset.Local)]
    public async Task A_miss_that_overlapped_a_write_does_not_cache_its_older_version_over_the_write(ConsistencyPreset preset)
    {
        // The miss's download is held half-way while the write lands, so the miss ends after the write, with the old bytes.
        DownloadFault fault = DownloadFault.HoldAt(50);
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = preset, wrapStorage: s => new FaultyBlobStore(s, fault));
        byte[] older = Encoding.ASCII.GetBytes(new string('o', 100));
        byte[] newer = Encoding.ASCII.GetBytes(new string('n', 100));
        await h.UploadDirectAsync("register", older);

        Task<ObjectLease> miss = h.Cachelet.ReadAsync(h.Key("register"));
        await fault.Reached.WaitAsync(TimeSpan.FromSeconds(30));
        WriteReceipt written = await h.Cachelet.WriteAsync(h.Key("register"), newer);
        fault.Release();
        using (ObjectLease overlapped = await miss)
        {
            Assert.True(overlapped.Span.SequenceEqual(older), "the miss began before the write, so it returns the older version");
            Assert.False(overlapped.IsCached);
        }

        using ObjectLease after = await h.Cachelet.ReadAsync(h.Key("register"));
        Assert.Equal(ReadSource.LocalHit, after.Source);
        Assert.Equal(written.Version, after.Version);
        Assert.True(after.Span.SequenceEqual(newer), "a read after the write must see it, not the overlapping miss's older copy");
        Assert.Single(h.MapFiles());
    }
}
