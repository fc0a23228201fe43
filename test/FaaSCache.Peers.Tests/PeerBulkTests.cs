namespace FaaSCache.Peers.Tests;

/// <summary>
/// Large bodies over the owner's bulk connection (raw TCP beside gRPC) keep gRPC's guarantees: the app's key,
/// the checksum checked before the object exists, nothing kept from a broken transfer.
/// </summary>
[Trait("Category", "Integration")]
public sealed class PeerBulkTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int Size = 6_000_000;

    [Fact]
    public async Task A_large_remote_hit_takes_its_body_over_the_bulk_connection_and_later_gets_need_no_grpc_call()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string large = cluster.KeyOwnedBy("b", "large");
        string small = cluster.KeyOwnedBy("b", "small");
        byte[] largeContent = PeerCluster.RandomBytes(Size, seed: 21);
        byte[] smallContent = PeerCluster.RandomBytes(1_000, seed: 22);
        await cluster.UploadAsync(large, largeContent);
        await cluster.UploadAsync(small, smallContent);
        (await cluster["b"].ReadAsync(large)).Dispose();
        (await cluster["b"].ReadAsync(small)).Dispose();

        // The first get to b is a gRPC call: its header offers the large body on b's bulk port (and names the port).
        using (ObjectLease lease = await cluster["a"].ReadAsync(large))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(largeContent));
        }

        Assert.Equal(1, cluster.Client("a").BulkGets);
        Assert.Equal(0, cluster.Client("a").RawGets);

        // Later whole gets go to that port directly, one round trip each, small or large.
        using (ObjectLease lease = await cluster["a"].ReadAsync(small))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(smallContent));
        }

        cluster["a"].Remove(large);
        using (ObjectLease lease = await cluster["a"].ReadAsync(large))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(largeContent));
        }

        Assert.Equal(2, cluster.Client("a").RawGets);
        Assert.Equal(1, cluster.Client("a").BulkGets);
        Assert.Equal(0, cluster.Server("b").Services.GetRequiredService<PeerBulkServer>().PendingOffers);

        // A blob that does not exist is still "not found", not "owner unavailable".
        await Assert.ThrowsAsync<BlobNotFoundException>(() => cluster["a"].ReadAsync(cluster.KeyOwnedBy("b", "missing")));
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
    }

    [Fact]
    public async Task A_corrupted_byte_in_a_get_on_a_kept_open_bulk_connection_is_caught_and_nothing_is_kept()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, configureServer: id => id == "b" ? Corrupt : null);
        string small = cluster.KeyOwnedBy("b", "small");
        string large = cluster.KeyOwnedBy("b", "large");
        await cluster.UploadAsync(small, PeerCluster.RandomBytes(1_000, seed: 25));
        byte[] content = PeerCluster.RandomBytes(Size, seed: 26);
        await cluster.UploadAsync(large, content);
        (await cluster["a"].ReadAsync(small)).Dispose();

        PeerUnavailableException e = await Assert.ThrowsAsync<PeerUnavailableException>(() => cluster.Client("a").GetAsync("b", large, true, async (length, _, body, token) =>
        {
            var buffer = new byte[length];
            await body.ReadExactlyAsync(buffer, token);
            return buffer;
        }));

        // Only the bulk connection damages bytes here, and no ticket was used: the get went on the kept-open connection.
        Assert.Contains("corrupted", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, cluster.Client("a").BulkGets);
        Assert.Equal(0, cluster.Client("a").RawGets);

        // Through the cachelet: the damaged copy is not kept, the reader falls back to storage.
        using ObjectLease lease = await cluster["a"].ReadAsync(large);
        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.Equal(2, cluster.MapFiles("a").Length);
    }

    [Fact]
    public async Task A_bulk_transfer_that_breaks_half_way_leaves_no_map_on_the_reader_which_falls_back_to_storage()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, configureServer: id => id == "b" ? BreakHalfWay : null);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 23);
        await cluster.UploadAsync(key, content);
        (await cluster["b"].ReadAsync(key)).Dispose();

        // Once offered with a ticket after a gRPC call, once on a kept-open connection: both break half-way.
        foreach (int attempt in new[] { 1, 2 })
        {
            using ObjectLease lease = await cluster["a"].ReadAsync(key);

            Assert.Equal(ReadSource.StorageFallback, lease.Source);
            Assert.True(lease.Span.SequenceEqual(content));
            Assert.Equal([lease.MapPath], cluster.MapFiles("a"));
            Assert.Equal(attempt, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
            Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFromPeers);
            cluster["a"].Remove(key);
        }

        Assert.Equal(1, cluster.Client("a").BulkGets);
        Assert.Equal(0, cluster.Client("a").RawGets);
    }

    [Fact]
    public async Task A_bulk_connection_with_another_apps_token_or_a_token_for_another_method_is_refused_and_the_ticket_stays_unclaimed()
    {
        PeerKey key = PeerKey.Derive("the app's storage secret", "bulk-app");
        await using var server = new PeerBulkServer(Microsoft.Extensions.Options.Options.Create(new PeerServerOptions { Key = key }));
        int port = server.Listen(IPAddress.Loopback);
        byte[] content = PeerCluster.RandomBytes(3_000_000, seed: 24);
        PeerBulkOffer offer = server.Offer(content, null, null, CancellationToken.None);

        string otherApps = PeerKey.Derive("another app's secret", "bulk-app").CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow);
        string otherMethods = key.CreateToken(GetReplyFrame.Method.FullName, DateTimeOffset.UtcNow);
        foreach (string token in new[] { otherApps, otherMethods })
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            PeerTransferException refused = await Assert.ThrowsAsync<PeerTransferException>(() => Open(port, token, offer.TicketBytes, content.Length, timeout));
            Assert.Equal(PeerTransferFailure.Refused, refused.Failure);
            Assert.Equal(1, server.PendingOffers);
        }

        // The app's own token for bulk gets the bytes, checked against the checksum that follows them.
        using (var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
        {
            await using PeerBulkBodyStream body = await Open(port, key.CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow), offer.TicketBytes, content.Length, timeout);
            var received = new byte[content.Length];
            await body.ReadExactlyAsync(received, timeout.Token);
            Assert.True(body.Verified);
            Assert.Equal(content, received);
        }

        await offer.Completion.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, server.PendingOffers);
    }

    private static Task<PeerBulkBodyStream> Open(int port, string token, byte[] ticket, long length, CancellationTokenSource timeout)
        => PeerBulkBodyStream.OpenAsync("127.0.0.1", port, token, ticket, length, new EndedReplies(), timeout, TimeSpan.FromSeconds(15), TimeSpan.FromSeconds(3));

    private static void Corrupt(IServiceCollection services)
        => services.AddSingleton(sp => new PeerBulkServer(sp.GetRequiredService<IOptions<PeerServerOptions>>(), cache: sp.GetRequiredService<IPeerServingCache>())
        {
            Tamper = CorruptingInterceptor.CorruptBulkSliceAsync,
        });

    private static void BreakHalfWay(IServiceCollection services)
        => services.AddSingleton(sp => new PeerBulkServer(sp.GetRequiredService<IOptions<PeerServerOptions>>(), cache: sp.GetRequiredService<IPeerServingCache>())
        {
            Tamper = (offset, slice, _) => offset >= Size / 2 ? throw new IOException("the owner broke off the bulk transfer for this test") : ValueTask.FromResult(slice),
        });

    /// <summary>A get's call that has ended (the bulk body is all there is).</summary>
    private sealed class EndedReplies : IAsyncStreamReader<GetReplyFrame>
    {
        public GetReplyFrame Current => throw new InvalidOperationException("No replies.");

        public Task<bool> MoveNext(CancellationToken cancellationToken) => Task.FromResult(false);
    }
}
