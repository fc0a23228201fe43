namespace FaaSCache.Peers.Tests;

/// <summary>
/// A remote miss in one pass: the owner streams the object to the requester while it downloads it. The owner's
/// storage is held half-way by the test, so "the requester had the object's map before the download ended" is decided by
/// the order of events, not by a clock.
/// </summary>
[Trait("Category", "Integration")]
public sealed class PipelinedMissTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int Size = 8 << 20;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_remote_miss_reaches_the_requester_while_the_owner_is_still_downloading_it(bool overBulk)
    {
        var gate = DownloadFault.HoldAt(Size / 2);
        await using var cluster = await PeerCluster.StartAsync(azurite, wrapStorage: (id, inner) => id == "b" ? new FaultyBlobStore(inner, gate) : inner);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 12);
        await cluster.UploadAsync(key, content);
        int held = await LearnBulkPortAsync(cluster, overBulk);
        long fetchedBefore = cluster["b"].Metrics.Snapshot().BytesFetched;

        Task<ObjectLease> read = cluster["a"].ReadAsync(key);
        await gate.Reached.WaitAsync(TimeSpan.FromSeconds(60));

        // The owner has not finished its download, yet the requester already holds the object's map and is filling it.
        await WaitForAsync(() => cluster.MapFiles("a").Length == held + 1, "the requester's map to appear while the owner's download is held half-way");
        Assert.False(read.IsCompleted);
        Assert.False(cluster["b"].Contains(key));

        gate.Release();
        using ObjectLease lease = await read.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(ReadSource.RemoteMiss, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.True(cluster["b"].Contains(key));
        Assert.Equal(Size, cluster["b"].Metrics.Snapshot().BytesFetched - fetchedBefore);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFetched);
        Assert.Equal(overBulk ? 2 : 0, cluster.Client("a").RawGets);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_download_that_breaks_half_way_leaves_nothing_on_the_owner_and_the_requester_reads_storage(bool overBulk)
    {
        var gate = DownloadFault.BreakAt(Size / 2);
        await using var cluster = await PeerCluster.StartAsync(azurite, wrapStorage: (id, inner) => id == "b" ? new FaultyBlobStore(inner, gate) : inner);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 13);
        await cluster.UploadAsync(key, content);
        int held = await LearnBulkPortAsync(cluster, overBulk);

        using ObjectLease lease = await cluster["a"].ReadAsync(key).WaitAsync(TimeSpan.FromSeconds(120));

        // The requester never kept the half it was streamed: it read the whole object from storage instead.
        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.Equal(held + 1, cluster.MapFiles("a").Length);
        Assert.False(cluster["b"].Contains(key));
        await WaitForAsync(() => cluster.MapFiles("b").Length == held, "the owner's broken map to be deleted");
    }

    /// <summary>
    /// With <paramref name="overBulk"/>, a first small get of b over gRPC names b's bulk port (and a second goes there), so
    /// the miss goes there too; the objects each member then holds (0 or 2).
    /// </summary>
    private static async Task<int> LearnBulkPortAsync(PeerCluster cluster, bool overBulk)
    {
        if (!overBulk)
        {
            return 0;
        }

        string first = cluster.KeyOwnedBy("b", "first");
        string second = cluster.KeyOwnedBy("b", "second");
        await cluster.UploadAsync(first, PeerCluster.RandomBytes(1_000, seed: 14));
        await cluster.UploadAsync(second, PeerCluster.RandomBytes(1_000, seed: 15));
        (await cluster["a"].ReadAsync(first)).Dispose();
        (await cluster["a"].ReadAsync(second)).Dispose();
        Assert.Equal(1, cluster.Client("a").RawGets);

        return 2;
    }

    private static async Task WaitForAsync(Func<bool> condition, string what)
    {
        DateTime deadline = DateTime.UtcNow.AddSeconds(60);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out waiting for {what}.");
            await Task.Delay(20);
        }
    }
}
