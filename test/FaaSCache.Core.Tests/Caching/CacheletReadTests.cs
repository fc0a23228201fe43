namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class CacheletReadTests
{
    [Fact]
    public async Task First_read_is_a_local_miss_and_the_second_a_local_hit_on_the_same_map()
    {
        await using var h = await CacheletHarness.CreateAsync();
        byte[] content = CacheletHarness.RandomBytes(300_000);
        string etag = await h.UploadDirectAsync("model.bin", content);

        string firstMap;
        using (ObjectLease first = await h.Cachelet.ReadAsync(h.Key("model.bin")))
        {
            Assert.Equal(ReadSource.LocalMiss, first.Source);
            Assert.True(first.IsCached);
            Assert.Equal(etag, first.Version);
            Assert.Equal(content.Length, first.Count);
            Assert.Equal(0, first.Offset);
            Assert.True(first.Span.SequenceEqual(content));
            firstMap = first.MapName;
        }

        using ObjectLease second = await h.Cachelet.ReadAsync(h.Key("model.bin"));
        Assert.Equal(ReadSource.LocalHit, second.Source);
        Assert.Equal(firstMap, second.MapName);
        Assert.True(second.Span.SequenceEqual(content));
        Assert.Single(h.MapFiles());

        var counters = h.Cachelet.Metrics.Snapshot();
        Assert.Equal(1, counters.LocalMisses);
        Assert.Equal(1, counters.LocalHits);
        Assert.Equal(content.Length, counters.BytesFetched);
        Assert.Equal(2L * content.Length, counters.BytesServed);
        Assert.Equal(content.Length, counters.BytesCached);
    }

    [Fact]
    public async Task The_map_file_has_the_host_layout_and_mode_0600()
    {
        await using var h = await CacheletHarness.CreateAsync();
        byte[] content = Encoding.UTF8.GetBytes("hello shared memory");
        await h.UploadDirectAsync("hello.txt", content);

        using ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("hello.txt"));
        string path = Path.Combine(h.MapDirectory, lease.MapName);
        Assert.Equal(path, lease.MapPath);
        Assert.EndsWith("/AzureFunctions", h.MapDirectory, StringComparison.Ordinal);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(path));
        Assert.True(Guid.TryParseExact(lease.MapName, "N", out _));

        byte[] file = await File.ReadAllBytesAsync(path);
        Assert.Equal(1, file[0]);
        Assert.Equal(content.Length, BitConverter.ToInt64(file, 1));
        Assert.Equal(content, file[9..]);
    }

    [Fact]
    public async Task Strong_reads_see_a_write_made_directly_to_storage()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Strong);
        await h.UploadDirectAsync("counter", Encoding.UTF8.GetBytes("1"));
        (await h.Cachelet.ReadAsync(h.Key("counter"))).Dispose();
        using (ObjectLease hit = await h.Cachelet.ReadAsync(h.Key("counter")))
        {
            Assert.Equal(ReadSource.LocalHit, hit.Source);
        }

        string newETag = await h.UploadDirectAsync("counter", Encoding.UTF8.GetBytes("2"));

        using ObjectLease fresh = await h.Cachelet.ReadAsync(h.Key("counter"));
        Assert.Equal(ReadSource.LocalMiss, fresh.Source);
        Assert.Equal("2", Encoding.UTF8.GetString(fresh.Span));
        Assert.Equal(newETag, fresh.Version);
        Assert.Single(h.MapFiles());
        Assert.Equal(2, h.Cachelet.Metrics.Snapshot().VersionChecks);
    }

    [Fact]
    public async Task Local_reads_keep_serving_the_cached_version_after_an_external_write()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Local);
        await h.UploadDirectAsync("counter", Encoding.UTF8.GetBytes("1"));
        (await h.Cachelet.ReadAsync(h.Key("counter"))).Dispose();

        await h.UploadDirectAsync("counter", Encoding.UTF8.GetBytes("2"));

        using ObjectLease stale = await h.Cachelet.ReadAsync(h.Key("counter"));
        Assert.Equal(ReadSource.LocalHit, stale.Source);
        Assert.Equal("1", Encoding.UTF8.GetString(stale.Span));
        Assert.Equal(0, h.Cachelet.Metrics.Snapshot().VersionChecks);
    }

    [Fact]
    public async Task A_missing_blob_gives_a_clear_not_found_and_caches_nothing()
    {
        await using var h = await CacheletHarness.CreateAsync();

        var missingBlob = await Assert.ThrowsAsync<BlobNotFoundException>(() => h.Cachelet.ReadAsync(h.Key("nope.bin")));
        Assert.Contains(h.Key("nope.bin"), missingBlob.Message, StringComparison.Ordinal);
        Assert.Contains("blob does not exist", missingBlob.Message, StringComparison.Ordinal);

        var missingContainer = await Assert.ThrowsAsync<BlobNotFoundException>(() => h.Cachelet.ReadAsync("no-such-container/x"));
        Assert.Contains("container does not exist", missingContainer.Message, StringComparison.Ordinal);
        Assert.Equal("no-such-container/x", missingContainer.Key);

        Assert.Empty(h.MapFiles());
        Assert.Equal(0, h.Cachelet.Count);
    }

    [Fact]
    public async Task A_blob_deleted_behind_a_strong_cache_is_forgotten_on_the_next_read()
    {
        await using var h = await CacheletHarness.CreateAsync();
        await h.UploadDirectAsync("gone", [1, 2, 3]);
        (await h.Cachelet.ReadAsync(h.Key("gone"))).Dispose();
        await h.DeleteDirectAsync("gone");

        await Assert.ThrowsAsync<BlobNotFoundException>(() => h.Cachelet.ReadAsync(h.Key("gone")));
        Assert.False(h.Cachelet.Contains(h.Key("gone")));
        Assert.Empty(h.MapFiles());
    }

    [Theory]
    [InlineData("")]
    [InlineData("no-slash")]
    [InlineData("UPPER/blob")]
    [InlineData("ab/blob")]
    [InlineData("container/")]
    public async Task A_malformed_key_is_rejected_naming_it(string key)
    {
        await using var h = await CacheletHarness.CreateAsync();
        var e = await Assert.ThrowsAsync<ArgumentException>(() => h.Cachelet.ReadAsync(key));
        Assert.Contains($"'{key}'", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Concurrent_misses_on_one_key_make_one_fetch()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Local);
        byte[] content = CacheletHarness.RandomBytes(2_000_000);
        await h.UploadDirectAsync("popular", content);

        ObjectLease[] leases = await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => Task.Run(() => h.Cachelet.ReadAsync(h.Key("popular")))));
        try
        {
            Assert.All(leases, l => Assert.True(l.Span.SequenceEqual(content)));
            Assert.Single(leases.Select(l => l.MapName).Distinct());
            Assert.Equal(content.Length, h.Cachelet.Metrics.Snapshot().BytesFetched);
            Assert.Equal(1, leases.Count(l => l.Source == ReadSource.LocalMiss));
        }
        finally
        {
            Array.ForEach(leases, l => l.Dispose());
        }
    }

    [Fact]
    public async Task Objects_larger_than_the_capacity_are_served_without_being_cached()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.CapacityBytes = 1 << 20);
        byte[] content = CacheletHarness.RandomBytes(3 << 20);
        await h.UploadDirectAsync("huge", content);

        using (ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("huge")))
        {
            Assert.False(lease.IsCached);
            Assert.Equal(ReadSource.LocalMiss, lease.Source);
            Assert.True(lease.Span.SequenceEqual(content));
            Assert.Equal(0, h.Cachelet.BytesCached);
        }

        Assert.Empty(h.MapFiles());
        Assert.Equal(0, h.Cachelet.Count);
    }

    [Fact]
    public async Task Do_not_cache_keys_are_read_and_written_straight_through_storage()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.DoNotCache = ["*/logs/*"]);
        await h.UploadDirectAsync("logs/today.txt", [7, 7, 7]);

        using (ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("logs/today.txt")))
        {
            Assert.Equal(ReadSource.Bypass, lease.Source);
            Assert.False(lease.IsCached);
            Assert.Equal([7, 7, 7], lease.Span.ToArray());
        }

        WriteReceipt receipt = await h.Cachelet.WriteAsync(h.Key("logs/tomorrow.txt"), new byte[] { 8 });
        Assert.False(receipt.Cached);
        Assert.True(receipt.Persisted);
        Assert.Equal([8], await h.DownloadDirectAsync("logs/tomorrow.txt"));

        // A nested path is not matched by a single '*'.
        await h.UploadDirectAsync("logs/deep/x", [1]);
        using (ObjectLease nested = await h.Cachelet.ReadAsync(h.Key("logs/deep/x")))
        {
            Assert.True(nested.IsCached);
        }

        Assert.Equal(1, h.Cachelet.Count);
    }

    [Fact]
    public async Task A_transfer_that_breaks_half_way_leaves_nothing_cached()
    {
        await using var h = await CacheletHarness.CreateAsync(wrapStorage: s => new FaultyBlobStore(s, DownloadFault.BreakAt(500_000)));
        await h.UploadDirectAsync("fragile", CacheletHarness.RandomBytes(1_000_000));

        var e = await Assert.ThrowsAsync<IOException>(() => h.Cachelet.ReadAsync(h.Key("fragile")));
        Assert.Contains("broken", e.Message, StringComparison.Ordinal);
        Assert.Empty(h.MapFiles());
        Assert.Equal(0, h.Cachelet.Count);
        Assert.Equal(0, h.Cachelet.BytesCached);
    }

    [Fact]
    public async Task Statistics_count_access_types_writes_and_inter_arrival_time()
    {
        var time = new Microsoft.Extensions.Time.Testing.FakeTimeProvider(DateTimeOffset.Parse("2026-01-01T00:00:00Z", System.Globalization.CultureInfo.InvariantCulture));
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Local, time: time);
        await h.UploadDirectAsync("s", [1]);

        (await h.Cachelet.ReadAsync(h.Key("s"))).Dispose();
        time.Advance(TimeSpan.FromSeconds(2));
        (await h.Cachelet.ReadAsync(h.Key("s"))).Dispose();
        time.Advance(TimeSpan.FromSeconds(4));
        await h.Cachelet.WriteAsync(h.Key("s"), new byte[] { 2 });

        ObjectStatistics stats = h.Cachelet.GetStatistics(h.Key("s"))!;
        Assert.Equal(1, stats.LocalMisses);
        Assert.Equal(1, stats.LocalHits);
        Assert.Equal(1, stats.Writes);
        Assert.Equal(TimeSpan.FromSeconds(3), stats.MeanInterArrival);
        Assert.Equal(time.GetUtcNow(), stats.LastAccess);
        Assert.True(stats.Owned);
        Assert.True(stats.Cached);
        Assert.Null(h.Cachelet.GetStatistics(h.Key("never")));
    }
}
