namespace FaaSCache.Core.Tests.Caching;

/// <summary>
/// The one read entry with its optional progress: a read given a <see cref="DownloadFollower"/> hands over the storage
/// download it makes while the map fills; a hit, a small object or a read without a follower come back whole. The
/// store is held half-way by the test, so "handed over before the download ended" is decided by the order of events.
/// </summary>
[Trait("Category", "Unit")]
public sealed class DownloadFollowerTests
{
    private const int Size = 1 << 20;

    [Fact]
    public async Task A_followed_miss_is_handed_over_while_it_fills_and_admitted_once_whole()
    {
        var gate = DownloadFault.HoldAt(Size / 2);
        await using var h = await CacheletHarness.CreateAsync(wrapStorage: inner => new FaultyBlobStore(inner, gate));
        byte[] content = CacheletHarness.RandomBytes(Size, seed: 7);
        await h.UploadDirectAsync("big.bin", content);

        var follower = new DownloadFollower();
        Task<ObjectLease> read = h.Cachelet.ReadAsync(h.Key("big.bin"), follower, CancellationToken.None);
        PeerGetServe served = await follower.ServeAsync(read).WaitAsync(TimeSpan.FromSeconds(30));
        await gate.Reached.WaitAsync(TimeSpan.FromSeconds(30));

        // Half the bytes are in, the read has not ended and the object is not admitted: the follower streams what is there.
        FillProgress progress = Assert.IsType<FillProgress>(served.Progress);
        Assert.Null(served.Lease);
        Assert.False(read.IsCompleted);
        Assert.False(h.Cachelet.Contains(h.Key("big.bin")));
        long filled = await progress.WaitAsync(0, CancellationToken.None);
        Assert.InRange(filled, 1, Size - 1);
        Assert.True(progress.Content.Span[..(int)filled].SequenceEqual(content.AsSpan(0, (int)filled)));

        gate.Release();
        Assert.Equal(Size, await progress.WaitAsync(Size - 1, CancellationToken.None));
        progress.ReaderDone();
        using ObjectLease lease = await served.Completion!.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(ReadSource.LocalMiss, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.True(h.Cachelet.Contains(h.Key("big.bin")));
    }

    [Fact]
    public async Task A_hit_a_small_miss_and_a_read_without_a_follower_come_back_whole()
    {
        await using var h = await CacheletHarness.CreateAsync();
        byte[] big = CacheletHarness.RandomBytes(Size, seed: 8);
        byte[] small = CacheletHarness.RandomBytes(1_000, seed: 9);
        await h.UploadDirectAsync("big.bin", big);
        await h.UploadDirectAsync("small.bin", small);

        using (ObjectLease plain = await h.Cachelet.ReadAsync(h.Key("big.bin")))
        {
            Assert.Equal(ReadSource.LocalMiss, plain.Source);
        }

        var hitFollower = new DownloadFollower();
        PeerGetServe hit = await hitFollower.ServeAsync(h.Cachelet.ReadAsync(h.Key("big.bin"), hitFollower, CancellationToken.None));
        var smallFollower = new DownloadFollower();
        PeerGetServe miss = await smallFollower.ServeAsync(h.Cachelet.ReadAsync(h.Key("small.bin"), smallFollower, CancellationToken.None));

        using ObjectLease hitLease = Assert.IsType<ObjectLease>(hit.Lease);
        Assert.True(hit.Hit);
        Assert.Null(hit.Progress);
        Assert.True(hitLease.Span.SequenceEqual(big));
        using ObjectLease missLease = Assert.IsType<ObjectLease>(miss.Lease);
        Assert.False(miss.Hit);
        Assert.Null(miss.Progress);
        Assert.Equal(ReadSource.LocalMiss, missLease.Source);
        Assert.False(hitFollower.Published.IsCompleted);
        Assert.False(smallFollower.Published.IsCompleted);
    }

    [Fact]
    public async Task A_reader_that_does_not_follow_gets_no_follower_and_a_large_miss_whole()
    {
        await using var h = await CacheletHarness.CreateAsync();
        byte[] big = CacheletHarness.RandomBytes(Size, seed: 10);
        await h.UploadDirectAsync("big.bin", big);
        DownloadFollower? given = new();

        PeerGetServe served = await DownloadFollower.ReadAndServeAsync(follow: false, f => h.Cachelet.ReadAsync(h.Key("big.bin"), given = f, CancellationToken.None));

        Assert.Null(given);
        Assert.Null(served.Progress);
        using ObjectLease lease = Assert.IsType<ObjectLease>(served.Lease);
        Assert.Equal(ReadSource.LocalMiss, lease.Source);
        Assert.True(lease.Span.SequenceEqual(big));
    }

    [Fact]
    public async Task A_followed_read_of_a_missing_blob_throws_as_a_plain_read_does()
    {
        await using var h = await CacheletHarness.CreateAsync();
        var follower = new DownloadFollower();

        await Assert.ThrowsAsync<BlobNotFoundException>(() => follower.ServeAsync(h.Cachelet.ReadAsync(h.Key("none.bin"), follower, CancellationToken.None)));
        await Assert.ThrowsAsync<BlobNotFoundException>(() => h.Cachelet.ReadAsync(h.Key("none.bin")));
    }
}
