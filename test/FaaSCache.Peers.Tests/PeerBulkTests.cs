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
    public async Task The_first_get_of_a_peer_goes_over_grpc_and_names_its_bulk_port_and_every_later_whole_get_goes_there()
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

        // The first get to b is a gRPC call, its body in chunks; its header names b's bulk port.
        using (ObjectLease lease = await cluster["a"].ReadAsync(large))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(largeContent));
        }

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

        // A range stays on gRPC.
        PeerRangeResult<byte[]>? range = await cluster.Client("a").GetRangeAsync("b", large, 10, 100, false, async (length, _, body, token) =>
        {
            var buffer = new byte[length];
            await body.ReadExactlyAsync(buffer, token);
            return buffer;
        });
        Assert.Equal(largeContent[10..110], range!.Value.Value);
        Assert.Equal(2, cluster.Client("a").RawGets);

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

        // Only the bulk connection damages bytes here: the get went on the kept-open connection (and is not counted as served).
        Assert.Contains("corrupted", e.Message, StringComparison.Ordinal);
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

        // The first get (gRPC) names the bulk port; the next one goes there and breaks half-way.
        (await cluster["a"].ReadAsync(key)).Dispose();
        cluster["a"].Remove(key);
        long fromPeers = cluster["a"].Metrics.Snapshot().BytesFromPeers;
        using ObjectLease lease = await cluster["a"].ReadAsync(key);

        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.Equal([lease.MapPath], cluster.MapFiles("a"));
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.Equal(fromPeers, cluster["a"].Metrics.Snapshot().BytesFromPeers);
        Assert.Equal(0, cluster.Client("a").RawGets);
    }

    [Fact]
    public async Task A_bulk_request_with_another_apps_token_or_a_token_for_another_method_is_refused_and_the_connection_closed()
    {
        PeerKey key = PeerKey.Derive("the app's storage secret", "bulk-app");
        await using var server = new PeerBulkServer(Microsoft.Extensions.Options.Options.Create(new PeerServerOptions { Key = key }));
        int port = server.Listen(IPAddress.Loopback);

        string otherApps = PeerKey.Derive("another app's secret", "bulk-app").CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow);
        string otherMethods = key.CreateToken(GetReplyFrame.Method.FullName, DateTimeOffset.UtcNow);
        foreach (string token in new[] { otherApps, otherMethods })
        {
            (byte status, bool closed) = await GetStatusAsync(port, token);
            Assert.Equal(PeerBulkServer.StatusRefused, status);
            Assert.True(closed);
        }

        // The app's own token is served (this server has no cachelet: "use gRPC"), and the connection stays open.
        (byte served, bool servedClosed) = await GetStatusAsync(port, key.CreateToken(PeerWire.BulkMethod, DateTimeOffset.UtcNow));
        Assert.Equal(PeerBulkServer.StatusUseGrpc, served);
        Assert.False(servedClosed);
    }

    /// <summary>Sends one <c>G</c> request; the reply's status byte, and whether the server then closed the connection.</summary>
    private static async Task<(byte Status, bool Closed)> GetStatusAsync(int port, string token)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, port, timeout.Token);
        byte[] request = PeerBulkBodyStream.GetRequest(token, "container/blob", fetchIfMissing: false);
        await PeerBulkBody.SendAllAsync(socket, request, timeout.Token);
        byte[] status = new byte[1];
        await PeerBulkBody.ReceiveExactlyAsync(socket, status, timeout.Token);

        // A closed connection reads its end at once; an open one has nothing more to say within a short wait.
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        wait.CancelAfter(TimeSpan.FromMilliseconds(500));
        try
        {
            return (status[0], await socket.ReceiveAsync(new byte[1], System.Net.Sockets.SocketFlags.None, wait.Token) == 0);
        }
        catch (OperationCanceledException) when (!timeout.IsCancellationRequested)
        {
            return (status[0], false);
        }
    }

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
}
