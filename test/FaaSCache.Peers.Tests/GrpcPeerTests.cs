namespace FaaSCache.Peers.Tests;

/// <summary>Remote hits, misses, ranges, writes, version queries and invalidations between real cachelets over gRPC.</summary>
[Trait("Category", "Integration")]
public sealed class GrpcPeerTests(AzuriteFixture azurite) : AzuriteTests
{
    [Theory]
    [InlineData(1_000)]
    [InlineData(20_000_000)]
    public async Task A_read_of_an_object_the_owner_holds_is_a_remote_hit_through_grpc_with_the_same_bytes(int size)
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(size);
        await cluster.UploadAsync(key, content);
        (await cluster["b"].ReadAsync(key)).Dispose();

        using (ObjectLease remote = await cluster["a"].ReadAsync(key))
        {
            Assert.Equal(ReadSource.RemoteHit, remote.Source);
            Assert.True(remote.Span.SequenceEqual(content));
        }

        using ObjectLease local = await cluster["a"].ReadAsync(key);
        Assert.Equal(ReadSource.LocalHit, local.Source);
        Assert.Equal(size, cluster["a"].Metrics.Snapshot().BytesFromPeers);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFetched);
        Assert.Equal(1, cluster["b"].Metrics.Snapshot().PeerServed);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
    }

    [Theory]
    [InlineData(1_000)]
    [InlineData(20_000_000)]
    public async Task A_read_of_an_object_the_owner_lacks_is_a_remote_miss_that_leaves_a_copy_on_the_owner(int size)
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(size, seed: 2);
        await cluster.UploadAsync(key, content);

        using ObjectLease remote = await cluster["a"].ReadAsync(key);

        Assert.Equal(ReadSource.RemoteMiss, remote.Source);
        Assert.True(remote.Span.SequenceEqual(content));
        Assert.True(cluster["b"].Contains(key));
        Assert.True(cluster["b"].GetStatistics(key)!.Owned);
        Assert.False(cluster["a"].GetStatistics(key)!.Owned);
        Assert.Equal(size, cluster["b"].Metrics.Snapshot().BytesFetched);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFetched);
    }

    [Fact]
    public async Task The_first_chunks_of_a_get_land_straight_in_the_consumers_buffer()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(5_000_000, seed: 3);
        await cluster.UploadAsync(key, content);

        // Bodies over gRPC chunks (large ones would otherwise take the bulk connection).
        GrpcPeerClient client = cluster.NewClient(cluster.Key, new PeerClientOptions { UseBulkTransfers = false });
        PeerFetchResult<byte[]>? got = await client.GetAsync("b", key, true, ReadAllAsync);

        Assert.True(got!.Value.Value.AsSpan().SequenceEqual(content));
        Assert.False(got.Value.OwnerHit);
        // A miss is streamed while the owner downloads it: at least one chunk per MiB, each as it arrives.
        Assert.True(client.DirectChunks >= 5, $"{client.DirectChunks} direct chunks");
        Assert.Equal(0, client.BufferedChunks);
        Assert.Equal(0, client.RawGets);
    }

    [Fact]
    public async Task A_range_get_delivers_exactly_the_bytes_asked_for()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(3_000_000, seed: 4);
        string etag = await cluster.UploadAsync(key, content);
        (await cluster["b"].ReadAsync(key)).Dispose();
        GrpcPeerClient client = cluster.Client("a");

        PeerRangeResult<byte[]> middle = (await client.GetRangeAsync("b", key, 1_000_001, 1_500_000, false, ReadAllAsync))!.Value;
        Assert.True(middle.Value.AsSpan().SequenceEqual(content.AsSpan(1_000_001, 1_500_000)));
        Assert.Equal((etag, 1_000_001L, 1_500_000L, 3_000_000L, true), (middle.Version, middle.Offset, middle.Length, middle.TotalLength, middle.OwnerHit));

        PeerRangeResult<byte[]> toTheEnd = (await client.GetRangeAsync("b", key, 2_999_000, 0, false, ReadAllAsync))!.Value;
        Assert.True(toTheEnd.Value.AsSpan().SequenceEqual(content.AsSpan(2_999_000)));

        PeerRangeResult<byte[]> cut = (await client.GetRangeAsync("b", key, 2_999_990, 100, false, ReadAllAsync))!.Value;
        Assert.Equal(10, cut.Length);
        Assert.True(cut.Value.AsSpan().SequenceEqual(content.AsSpan(2_999_990)));

        PeerRangeResult<byte[]> empty = (await client.GetRangeAsync("b", key, 3_000_000, 0, false, ReadAllAsync))!.Value;
        Assert.Empty(empty.Value);

        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => client.GetRangeAsync("b", key, 3_000_001, 0, false, ReadAllAsync));

        // The range did not disturb the owner's copy.
        Assert.Equal(1, cluster["b"].Count);
    }

    [Fact]
    public async Task A_write_through_the_owner_is_committed_there_and_reads_back_the_same()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Strong);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(5_000_000, seed: 5);

        WriteReceipt receipt = await cluster["a"].WriteAsync(key, content);

        Assert.True(receipt.Persisted);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.True(cluster["b"].Contains(key));
        using (ObjectLease onOwner = await cluster["b"].ReadAsync(key))
        {
            Assert.Equal(ReadSource.LocalHit, onOwner.Source);
            Assert.Equal(receipt.Version, onOwner.Version);
            Assert.True(onOwner.Span.SequenceEqual(content));
        }

        PeerFetchResult<byte[]> back = (await cluster.Client("a").GetAsync("b", key, false, ReadAllAsync))!.Value;
        Assert.True(back.Value.AsSpan().SequenceEqual(content));
        Assert.True(back.OwnerHit);
        Assert.Equal(receipt.Version, back.Version);
        Assert.Equal(content, await cluster.DownloadAsync(key));
    }

    [Fact]
    public async Task An_empty_object_puts_and_gets_through_the_owner()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");

        PeerWriteResult written = await cluster.Client("a").PutAsync("b", key, Stream.Null, 0);

        Assert.True(cluster["b"].Contains(key));
        PeerFetchResult<byte[]> back = (await cluster.Client("a").GetAsync("b", key, false, ReadAllAsync))!.Value;
        Assert.Empty(back.Value);
        Assert.Equal(written.Version, back.Version);
    }

    [Fact]
    public async Task The_version_query_answers_the_owners_version_and_null_for_a_missing_blob()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        string etag = await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("v1"));

        Assert.Equal(etag, await cluster.Client("a").GetVersionAsync("b", key));
        Assert.Null(await cluster.Client("a").GetVersionAsync("b", $"{cluster.Container.Name}/missing"));
    }

    [Fact]
    public async Task An_invalidation_drops_a_copy_of_another_version_and_keeps_the_named_one()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("a");
        string etag = await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("v1"));
        (await cluster["b"].ReadAsync(key)).Dispose();
        Assert.True(cluster["b"].Contains(key));

        await cluster.Client("a").InvalidateAsync("b", key, etag);
        Assert.True(cluster["b"].Contains(key));

        await cluster.Client("a").InvalidateAsync("b", key, "\"0x8DDNEWER\"");
        Assert.False(cluster["b"].Contains(key));
        Assert.Equal(1, cluster["b"].Metrics.Snapshot().Invalidations);
        Assert.Empty(cluster.MapFiles("b"));
    }

    [Fact]
    public async Task A_missing_blob_is_blob_not_found_and_an_uncached_one_without_fetch_is_null()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string missing = $"{cluster.Container.Name}/does-not-exist";
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, [1, 2, 3]);

        BlobNotFoundException e = await Assert.ThrowsAsync<BlobNotFoundException>(() => cluster.Client("a").GetAsync("b", missing, true, ReadAllAsync));
        Assert.Equal(missing, e.Key);
        Assert.Null(await cluster.Client("a").GetAsync("b", key, false, ReadAllAsync));
        Assert.False(cluster["b"].Contains(key));
        await Assert.ThrowsAsync<BlobNotFoundException>(() => cluster["a"].ReadAsync(missing));
    }

    [Fact]
    public async Task A_member_without_an_endpoint_or_with_a_dead_one_is_unavailable()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");

        await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").GetVersionAsync("nobody", key));
        await cluster.Server("b").StopAsync();
        PeerUnavailableException e = await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").GetAsync("b", key, true, ReadAllAsync));
        Assert.Equal("b", e.MemberId);
        await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").PutAsync("b", key, new MemoryStream([1]), 1));
    }

    internal static async Task<byte[]> ReadAllAsync(long length, string version, Stream content, CancellationToken cancellationToken)
    {
        var buffer = new byte[length];
        await content.ReadExactlyAsync(buffer, cancellationToken);
        return buffer;
    }
}
