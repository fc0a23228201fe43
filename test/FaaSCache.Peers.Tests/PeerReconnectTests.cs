namespace FaaSCache.Peers.Tests;

/// <summary>
/// Connections that may have lived through a partition are retired: after this instance regains its membership lease,
/// and for a member that leaves or (re)joins the ring. The next call connects anew, over real gRPC.
/// </summary>
[Trait("Category", "Integration")]
public sealed class PeerReconnectTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_regained_lease_and_a_member_that_leaves_and_rejoins_retire_the_connections_and_calls_still_succeed()
    {
        await using PeerCluster cluster = await PeerCluster.StartAsync(azurite);
        GrpcPeerClient client = cluster.NewClient(cluster.Key);
        RingOwnerLocator ring = cluster.Ring("a");
        client.FollowMembership(ring);
        string key = cluster.KeyOwnedBy("b");

        Assert.Null(await client.GetVersionAsync("b", key));
        Assert.Equal(0, client.ChannelsRetired);

        // A lease lost and not yet held again retires nothing (calls go on as they were); regaining it retires the channel.
        Assert.True(ring.SetLease(false));
        Assert.Null(await client.GetVersionAsync("b", key));
        Assert.Equal(0, client.ChannelsRetired);
        Assert.True(ring.SetLease(true));
        Assert.Equal(1, client.ChannelsRetired);

        // The next call connects anew and works; a heartbeat that keeps the lease retires nothing more.
        Assert.Null(await client.GetVersionAsync("b", key));
        Assert.False(ring.SetLease(true));
        Assert.Equal(1, client.ChannelsRetired);

        // b leaves the ring: its channel is retired; it rejoins: nothing left to retire until a call connects again.
        Assert.True(ring.Update(["a"]));
        Assert.Equal(2, client.ChannelsRetired);
        Assert.True(ring.Update(["a", "b"]));
        Assert.Equal(2, client.ChannelsRetired);
        Assert.Null(await client.GetVersionAsync("b", key));
        Assert.Equal(2, client.ChannelsRetired);
    }
}
