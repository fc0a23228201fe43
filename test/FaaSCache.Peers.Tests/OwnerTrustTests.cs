namespace FaaSCache.Peers.Tests;

/// <summary>
/// Under <c>owner</c> an owner's copy is served as it is only while membership is settled: after this instance lost its
/// lease (it could not heartbeat, so the others may have moved its keys and taken writes) or the ring changed, storage
/// (where every acknowledged write is) decides. The "other owner's write" is a write straight to storage here.
/// </summary>
[Trait("Category", "Integration")]
public sealed class OwnerTrustTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task An_owner_without_its_membership_lease_serves_storage_s_version_not_its_copy_and_after_regaining_it_checks_every_copy()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("a");
        await cluster.UploadAsync(key, Encoding.ASCII.GetBytes("v1"));
        (await cluster["a"].ReadAsync(key)).Dispose();

        // Settled, the owner's copy is served as it is (the test would see "v1" here without the lease rule below).
        await cluster.UploadAsync(key, Encoding.ASCII.GetBytes("v2"));
        Assert.Equal("v1", await ReadTextAsync(cluster["a"], key));

        cluster.Ring("a").SetLease(false);
        Assert.False(cluster["a"].Settled);
        Assert.Equal("v2", await ReadTextAsync(cluster["a"], key));
        Assert.Equal("v2", await ReadTextAsync(cluster["b"], key));

        cluster.Ring("a").SetLease(true);
        await cluster.UploadAsync(key, Encoding.ASCII.GetBytes("v3"));
        Assert.Equal("v3", await ReadTextAsync(cluster["a"], key));
        Assert.Equal("v3", await ReadTextAsync(cluster["b"], key));
    }

    [Fact]
    public async Task A_new_owner_after_a_ring_change_serves_its_copy_only_once_storage_confirmed_it()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, Encoding.ASCII.GetBytes("v1"));
        Assert.Equal("v1", await ReadTextAsync(cluster["a"], key));

        // b leaves a's ring: a owns the key now and holds the copy it read through b; a write went elsewhere meanwhile.
        cluster.Ring("a").Update(["a"]);
        await cluster.UploadAsync(key, Encoding.ASCII.GetBytes("v2"));
        Assert.Equal("v2", await ReadTextAsync(cluster["a"], key));
    }

    private static async Task<string> ReadTextAsync(Cachelet cachelet, string key)
    {
        using ObjectLease lease = await cachelet.ReadAsync(key);
        return Encoding.ASCII.GetString(lease.Span);
    }
}
