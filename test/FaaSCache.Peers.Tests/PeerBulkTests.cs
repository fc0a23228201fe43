using System.Net;
using FaaSCache.Caching;
using FaaSCache.TestSupport;
using Grpc.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Xunit;

namespace FaaSCache.Peers.Tests;

/// <summary>
/// Issue 12: large bodies over the owner's bulk connection (raw TCP beside gRPC) keep gRPC's guarantees: the app's key,
/// the checksum checked before the object exists, nothing kept from a broken transfer.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class PeerBulkTests(AzuriteFixture azurite)
{
    private const int Size = 6_000_000;

    [Fact]
    public async Task A_large_remote_hit_takes_its_body_over_the_bulk_connection_and_a_small_one_stays_on_grpc()
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

        using (ObjectLease lease = await cluster["a"].ReadAsync(large))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(largeContent));
        }

        Assert.Equal(1, cluster.Client("a").BulkGets);
        using (ObjectLease lease = await cluster["a"].ReadAsync(small))
        {
            Assert.Equal(ReadSource.RemoteHit, lease.Source);
            Assert.True(lease.Span.SequenceEqual(smallContent));
        }

        Assert.Equal(1, cluster.Client("a").BulkGets);
        Assert.Equal(0, cluster.Server("b").Services.GetRequiredService<PeerBulkServer>().PendingOffers);
    }

    [Fact]
    public async Task A_bulk_transfer_that_breaks_half_way_leaves_no_map_on_the_reader_which_falls_back_to_storage()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, configureServer: id => id == "b" ? BreakHalfWay : null);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 23);
        await cluster.UploadAsync(key, content);
        (await cluster["b"].ReadAsync(key)).Dispose();

        using ObjectLease lease = await cluster["a"].ReadAsync(key);

        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        Assert.Equal([lease.MapPath], cluster.MapFiles("a"));
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFromPeers);
        Assert.Equal(1, cluster.Client("a").BulkGets);
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

    private static void BreakHalfWay(IServiceCollection services)
        => services.AddSingleton(sp => new PeerBulkServer(sp.GetRequiredService<IOptions<PeerServerOptions>>())
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
