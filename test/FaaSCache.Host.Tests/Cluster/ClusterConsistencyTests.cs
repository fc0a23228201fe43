namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// Writes across three real host processes (Table 3): under <c>strong</c> and <c>owner</c> a write through any instance
/// goes through the owner and every instance then reads the new value; under <c>local</c> another instance keeps
/// serving the copy it had.
/// </summary>
[Trait("Category", "Cluster")]
public sealed class ClusterConsistencyTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Theory]
    [InlineData("strong")]
    [InlineData("owner")]
    public async Task After_a_write_through_one_instance_every_instance_reads_the_new_value(string consistency)
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, consistency, output);
        ClusterInstance a = cluster[0], b = cluster[1], c = cluster[2];
        string name = cluster.NameOwnedBy(b.Id, "counter");
        await cluster.UploadAsync(name, "41"u8.ToArray());

        // Every instance holds a copy of 41 (B as the owner, A and C as non-owned copies).
        foreach (ClusterInstance instance in cluster.Instances)
        {
            Assert.Equal("41", (await cluster.ReadAsync(instance, name)).Head);
        }

        // C is not the owner: its write goes through B, which invalidates A's copy.
        Assert.Equal(42, await cluster.IncrementAsync(c, name));

        foreach (ClusterInstance instance in new[] { a, b, c, a })
        {
            ClusterRead read = await cluster.ReadAsync(instance, name);
            Assert.True(read.Head == "42", $"{instance.Id} read '{read.Head}' ({read.Source}) after the write, not 42");
        }

        Assert.Equal("42", Encoding.UTF8.GetString(await cluster.DownloadAsync(name)));
        InvocationRecord increment = (await c.Host.GetInvocationsAsync("Increment"))[^1];
        Assert.True(increment.Output("next").Persisted, "the owner persisted the write before it answered (persist sync)");
        Assert.Equal(0, (await HostCluster.StatusAsync(c)).Count.OwnerUnreachable);
    }

    [Fact]
    public async Task Under_local_another_instance_keeps_serving_its_old_copy_after_a_write()
    {
        await using HostCluster cluster = await HostCluster.StartAsync(azurite, "local", output);
        ClusterInstance a = cluster[0], b = cluster[1], c = cluster[2];
        string name = cluster.NameOwnedBy(b.Id, "counter");
        await cluster.UploadAsync(name, "7"u8.ToArray());
        Assert.Equal("7", (await cluster.ReadAsync(a, name)).Head);
        Assert.Equal("7", (await cluster.ReadAsync(c, name)).Head);

        // C writes locally (and to storage: persist sync); nobody tells A.
        Assert.Equal(8, await cluster.IncrementAsync(c, name));

        ClusterRead onA = await cluster.ReadAsync(a, name);
        ClusterRead onC = await cluster.ReadAsync(c, name);
        Assert.Equal(("7", "lh"), (onA.Head, onA.Source));
        Assert.Equal(("8", "lh"), (onC.Head, onC.Source));
        Assert.Equal("8", Encoding.UTF8.GetString(await cluster.DownloadAsync(name)));
        Assert.Equal(0, (await HostCluster.StatusAsync(a)).Count.Invalidations);
    }
}
