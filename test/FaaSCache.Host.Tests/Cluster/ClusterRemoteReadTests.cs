namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// Three real host processes of one app as one cache (§3.2, Figure 6): reads of objects another instance owns go
/// to the owner once (remote hit or miss), then stay local.
/// </summary>
[Trait("Category", "Cluster")]
public sealed class ClusterRemoteReadTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task An_object_owned_by_B_and_read_on_A_is_a_remote_hit_the_first_time_and_a_local_hit_after()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "strong", output);
        ClusterInstance a = cluster[0], b = cluster[1];
        string name = cluster.NameOwnedBy(b.Id, "model");
        byte[] content = RandomNumberGenerator.GetBytes(1 << 20);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(content));
        await cluster.UploadAsync(name, content);

        // The owner reads it first: a local miss there, and B now has it.
        Assert.Equal("lm", (await cluster.ReadAsync(b, name)).Source);

        ClusterRead first = await cluster.ReadAsync(a, name);
        ClusterRead second = await cluster.ReadAsync(a, name);

        Assert.Equal(("rh", sha256), (first.Source, first.Sha256));
        Assert.Equal(("lh", sha256), (second.Source, second.Sha256));
        HostStatus onA = await HostCluster.StatusAsync(a);
        Assert.Equal((1L, 0L, 1L, 0L), (onA.Count.RemoteHits, onA.Count.RemoteMisses, onA.Count.LocalHits, onA.Count.OwnerUnreachable));
        Assert.Equal(content.Length, onA.Count.BytesFromPeers);
        Assert.Equal(0, onA.Count.BytesFetched);
        Assert.Equal(1, (await HostCluster.StatusAsync(b)).Count.PeerServed);
    }

    [Fact]
    public async Task A_first_read_through_a_non_owner_is_a_remote_miss_that_fills_the_owner_whose_next_read_is_a_local_hit()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "strong", output);
        ClusterInstance a = cluster[0], b = cluster[1], c = cluster[2];
        string name = cluster.NameOwnedBy(b.Id, "photo");
        byte[] content = RandomNumberGenerator.GetBytes(256 * 1024);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(content));
        await cluster.UploadAsync(name, content);

        ClusterRead throughA = await cluster.ReadAsync(a, name);
        ClusterRead onOwner = await cluster.ReadAsync(b, name);
        ClusterRead throughC = await cluster.ReadAsync(c, name);

        Assert.Equal(("rm", sha256), (throughA.Source, throughA.Sha256));
        Assert.Equal(("lh", sha256), (onOwner.Source, onOwner.Sha256));
        Assert.Equal(("rh", sha256), (throughC.Source, throughC.Sha256));
        HostStatus owner = await HostCluster.StatusAsync(b);
        // B fetched it from storage once, for A; C's read was served from B's copy.
        Assert.Equal((content.Length, 2L), (owner.Count.BytesFetched, owner.Count.PeerServed));
        HostStatus onA = await HostCluster.StatusAsync(a);
        Assert.Equal((1L, 0L, 0L), (onA.Count.RemoteMisses, onA.Count.BytesFetched, onA.Count.OwnerUnreachable));
    }

    [Fact]
    public async Task Concurrent_reads_of_one_key_on_a_non_owner_make_one_remote_fetch_and_the_rest_are_local_hits()
    {
        // Scaled loads pinned off: with them the owner may split its 16 MB miss over the instances, and A would count the
        // range it fetched for the owner as bytes from storage (CI saw 5,570,560 of them once).
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "strong", output, bandwidthScaling: false);
        ClusterInstance a = cluster[0], b = cluster[1];
        string name = cluster.NameOwnedBy(b.Id, "popular");
        byte[] content = RandomNumberGenerator.GetBytes(16 * 1024 * 1024);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(content));
        await cluster.UploadAsync(name, content);

        string[] answers = await Task.WhenAll(Enumerable.Range(0, 4).Select(async _ => (await cluster.ReadAsync(a, name)).Sha256));

        Assert.All(answers, s => Assert.Equal(sha256, s));
        IReadOnlyList<InvocationRecord> reads = await a.Host.GetInvocationsAsync("Read");
        output.WriteLine(string.Join(Environment.NewLine, reads.Select(r => $"{r.Input("data").Source} started {r.StartedAt:HH:mm:ss.fff}, {r.DurationMs:0} ms")));
        Assert.Equal(["lh", "lh", "lh", "rm"], reads.Select(r => r.Input("data").Source).Order(StringComparer.Ordinal));
        HostStatus onA = await HostCluster.StatusAsync(a);
        Assert.Equal((1L, 0L, (long)content.Length, 0L), (onA.Count.RemoteMisses, onA.Count.RemoteHits, onA.Count.BytesFromPeers, onA.Count.BytesFetched));
        HostStatus onB = await HostCluster.StatusAsync(b);
        Assert.Equal((1L, (long)content.Length), (onB.Count.PeerServed, onB.Count.BytesFetched));
    }

    [Fact]
    public async Task A_key_that_moves_to_a_joining_instance_is_taken_from_its_previous_owner_not_from_storage()
    {
        // Scaled loads pinned off: a 2 MB miss may be split over the two instances, and the counters below assume the
        // previous owner fetched it alone.
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "strong", output, count: 2, bandwidthScaling: false);
        ClusterInstance a = cluster[0], b = cluster[1];
        string joiner = $"{cluster.App.Name}-3";
        string[] before = [a.Id, b.Id], after = [a.Id, b.Id, joiner];
        string name = Enumerable.Range(0, 10_000).Select(k => $"moving-{k}")
            .First(n => cluster.OwnerOf(cluster.App.Key(n), before) == b.Id && cluster.OwnerOf(cluster.App.Key(n), after) == joiner);
        byte[] content = RandomNumberGenerator.GetBytes(2 * 1024 * 1024);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(content));
        await cluster.UploadAsync(name, content);
        Assert.Equal("lm", (await cluster.ReadAsync(b, name)).Source);

        ClusterInstance c = await cluster.JoinAsync();
        Assert.Equal(joiner, c.Id);
        ClusterRead onNewOwner = await cluster.ReadAsync(c, name);
        ClusterRead throughA = await cluster.ReadAsync(a, name);

        // The new owner's miss went to the previous owner (a remote hit, no storage download); A then reads through C.
        Assert.Equal(("rh", sha256), (onNewOwner.Source, onNewOwner.Sha256));
        Assert.Equal(("rh", sha256), (throughA.Source, throughA.Sha256));
        HostStatus onC = await HostCluster.StatusAsync(c);
        Assert.Equal((0L, (long)content.Length, 1L), (onC.Count.BytesFetched, onC.Count.BytesFromPeers, onC.Count.PeerServed));
        Assert.Equal(content.Length, (await HostCluster.StatusAsync(b)).Count.BytesFetched);
    }

    [Fact]
    public async Task Under_strong_a_key_handed_over_by_its_previous_owner_after_a_join_is_still_checked_against_storage()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "strong", output, count: 2);
        ClusterInstance b = cluster[1];
        string joiner = $"{cluster.App.Name}-3";
        string[] before = [cluster[0].Id, b.Id], after = [cluster[0].Id, b.Id, joiner];
        string name = Enumerable.Range(0, 10_000).Select(k => $"moving-{k}")
            .First(n => cluster.OwnerOf(cluster.App.Key(n), before) == b.Id && cluster.OwnerOf(cluster.App.Key(n), after) == joiner);
        await cluster.UploadAsync(name, "version 1"u8.ToArray());
        Assert.Equal("version 1", (await cluster.ReadAsync(b, name)).Head);

        // Someone writes the blob in storage directly (not through the cache): strong reads must see it.
        await cluster.UploadAsync(name, "version 2"u8.ToArray());
        ClusterInstance c = await cluster.JoinAsync();
        ClusterRead onNewOwner = await cluster.ReadAsync(c, name);

        Assert.True(onNewOwner.Head == "version 2", $"the new owner read '{onNewOwner.Head}' ({onNewOwner.Source}) under strong, not storage's 'version 2'");
        Assert.Equal("lm", onNewOwner.Source);
    }
}
