using Grpc.AspNetCore.Server;

namespace FaaSCache.Peers.Tests;

/// <summary>Every transfer carries an XxHash3 of its bytes; the receiver checks it before the object exists for anyone.</summary>
[Trait("Category", "Integration")]
public sealed class PeerCorruptionTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int Size = 5_000_000;

    [Fact]
    public async Task A_corrupted_chunk_in_a_get_is_detected_at_the_end_of_the_stream_and_the_error_is_peer_unavailable()
    {
        await using var cluster = await StartAsync(ConsistencyPreset.OwnerLocalRead);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, PeerCluster.RandomBytes(Size));
        long delivered = 0;

        PeerUnavailableException e = await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").GetAsync("b", key, true, async (length, _, content, token) =>
        {
            var buffer = new byte[length];
            while (delivered < length)
            {
                // The read that would complete the body throws instead of returning its bytes.
                int n = await content.ReadAsync(buffer.AsMemory((int)delivered), token);
                delivered += n;
            }

            return buffer;
        }));

        Assert.Contains("corrupted", e.Message, StringComparison.Ordinal);
        Assert.Equal("b", e.MemberId);
        Assert.True(delivered < Size, $"the consumer saw all {delivered} bytes as good");
        // A first get of a peer goes over gRPC, whatever its size: the chunks' damage was caught there.
        Assert.Equal(0, cluster.Client("a").RawGets);
    }

    [Fact]
    public async Task A_reader_whose_remote_copy_arrives_corrupted_keeps_no_map_and_falls_back_to_the_good_bytes_in_storage()
    {
        var storageDown = new SwitchableStorage.Switch { Down = true };
        await using var cluster = await StartAsync(ConsistencyPreset.OwnerLocalRead, (id, inner) => id == "a" ? new SwitchableStorage(inner, storageDown) : inner);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 7);
        await cluster.UploadAsync(key, content);

        // With storage unreachable too, the read fails, and the corrupted copy is not left behind.
        await Assert.ThrowsAsync<IOException>(() => cluster["a"].ReadAsync(key));
        Assert.Empty(cluster.MapFiles("a"));
        Assert.False(cluster["a"].Contains(key));
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFromPeers);
        Assert.Equal(0, cluster["a"].BytesCached);

        storageDown.Down = false;
        using ObjectLease lease = await cluster["a"].ReadAsync(key);
        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.Single(cluster.MapFiles("a"));
        Assert.Equal(2, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
    }

    [Fact]
    public async Task A_corrupted_put_commits_nothing_on_the_owner_nor_in_storage()
    {
        await using var cluster = await StartAsync(ConsistencyPreset.Strong);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 8);

        PeerUnavailableException e = await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").PutAsync("b", key, new MemoryStream(content), content.Length));

        Assert.Contains("corrupted", e.Message, StringComparison.Ordinal);
        Assert.False(cluster["b"].Contains(key));
        Assert.Empty(cluster.MapFiles("b"));
        Assert.Null(await cluster.DownloadAsync(key));

        // A cachelet writing through that owner falls back to committing (and persisting) the write itself.
        WriteReceipt receipt = await cluster["a"].WriteAsync(key, content);
        Assert.True(receipt.Persisted);
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.False(cluster["b"].Contains(key));
        Assert.Equal(content, await cluster.DownloadAsync(key));
    }

    private Task<PeerCluster> StartAsync(ConsistencyPreset preset, Func<string, IBlobStore, IBlobStore>? wrapStorage = null)
        => PeerCluster.StartAsync(
            azurite,
            preset,
            configureServer: id => id == "b" ? CorruptOnB : null,
            wrapStorage: wrapStorage);

    private static void CorruptOnB(IServiceCollection services)
    {
        services.AddSingleton<CorruptingInterceptor>();
        services.AddGrpc().AddServiceOptions<CacheletPeerService>(o => o.Interceptors.Add<CorruptingInterceptor>());
        services.AddSingleton(sp => new PeerBulkServer(sp.GetRequiredService<IOptions<PeerServerOptions>>(), cache: sp.GetRequiredService<IPeerServingCache>()) { Tamper = CorruptingInterceptor.CorruptBulkSliceAsync });
    }

    private sealed class SwitchableStorage(IBlobStore inner, SwitchableStorage.Switch state) : DelegatingBlobStore(inner)
    {
        public override Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
            => state.Down ? throw new IOException("storage is down for this test") : base.FetchAsync(key, ifNoneMatch, consume, cancellationToken);

        public sealed class Switch
        {
            public volatile bool Down;
        }
    }
}
