namespace FaaSCache.Peers.Tests;

/// <summary>
/// Writes under <c>owner</c> when membership or storage is out (found by the reliability suite's storage restart): an
/// instance without its membership lease neither acts as a key's owner nor picks one from its possibly stale ring, and
/// an owner whose storage refuses says so to the sender, which reports a write not made rather than one of unknown outcome;
/// a write whose owner is gone is in storage when it is acknowledged, under any preset.
/// </summary>
[Trait("Category", "Integration")]
public sealed class LeaseAndOutageWriteTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_write_through_an_instance_without_its_lease_waits_for_the_lease_and_then_commits()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("a");
        cluster.Ring("a").SetLease(false);

        Task<WriteReceipt> write = cluster["a"].WriteAsync(key, Encoding.ASCII.GetBytes("v1"));
        // Not yet in storage: without the lease, "a" may have been removed by the others and its keys moved.
        await Task.WhenAny(write, Task.Delay(TimeSpan.FromMilliseconds(500)));
        Assert.False(write.IsCompleted);
        Assert.Null(await cluster.DownloadAsync(key));

        cluster.Ring("a").SetLease(true);
        WriteReceipt receipt = await write;
        Assert.True(receipt.Persisted);
        Assert.Equal("v1", Encoding.ASCII.GetString((await cluster.DownloadAsync(key))!));
    }

    [Fact]
    public async Task A_write_through_an_instance_whose_lease_does_not_return_fails_as_not_made_naming_the_lease()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.Owner, configure: o =>
        {
            o.Membership.HeartbeatInterval = TimeSpan.FromMilliseconds(200);
            o.Membership.FailureTimeout = TimeSpan.FromMilliseconds(600);
        });
        string key = cluster.KeyOwnedBy("b");
        cluster.Ring("a").SetLease(false);

        var refused = await Assert.ThrowsAsync<MembershipLeaseLostException>(() => cluster["a"].WriteAsync(key, Encoding.ASCII.GetBytes("v1")));
        Assert.Equal(key, refused.Key);
        Assert.Contains("was not made", refused.Message, StringComparison.Ordinal);
        Assert.Contains("membership lease", refused.Message, StringComparison.Ordinal);
        Assert.Null(await cluster.DownloadAsync(key));
        Assert.Empty(cluster.MapFiles("a"));
    }

    [Fact]
    public async Task An_owner_whose_storage_is_unavailable_makes_the_sender_report_the_write_as_not_made_with_the_reason()
    {
        await using var cluster = await PeerCluster.StartAsync(
            azurite, ConsistencyPreset.Owner, wrapStorage: (id, store) => id == "b" ? new RefusingUploads(store) : store);
        string key = cluster.KeyOwnedBy("b");

        var failed = await Assert.ThrowsAsync<StorageUnavailableException>(() => cluster["a"].WriteAsync(key, Encoding.ASCII.GetBytes("v1")));
        Assert.Equal(key, failed.Key);
        Assert.Contains("Owner b did not make the put", failed.Message, StringComparison.Ordinal);
        Assert.Contains(RefusingUploads.Reason, failed.Message, StringComparison.Ordinal);
        Assert.Null(await cluster.DownloadAsync(key));
    }

    [Fact]
    public async Task Under_ownerAsync_a_write_whose_owner_is_gone_is_in_storage_when_acknowledged()
    {
        // Found by the reliability suite under load: the write was committed on the sender with a queued write-back,
        // and the sender's next read, falling back to storage while the owner was gone, found nothing.
        await using var cluster = await PeerCluster.StartAsync(azurite, ConsistencyPreset.OwnerAsync);
        string key = cluster.KeyOwnedBy("b");
        await cluster.Server("b").StopAsync();

        WriteReceipt receipt = await cluster["a"].WriteAsync(key, Encoding.ASCII.GetBytes("v1"));

        Assert.True(receipt.Persisted);
        Assert.Equal(PersistMode.Sync, receipt.Persist);
        Assert.Equal(0, cluster["a"].PendingWrites);
        Assert.Equal("v1", Encoding.ASCII.GetString((await cluster.DownloadAsync(key))!));
        using ObjectLease read = await cluster["a"].ReadAsync(key);
        Assert.Equal("v1", Encoding.ASCII.GetString(read.Span));
    }

    /// <summary>A real store whose uploads fail as an unreachable storage account's would.</summary>
    private sealed class RefusingUploads(IBlobStore inner) : DelegatingBlobStore(inner)
    {
        public const string Reason = "Connection refused (test)";

        public override Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default) =>
            Task.FromException<string>(new StorageUnavailableException($"Storage is unavailable: the upload of {key} did not succeed ({Reason}).") { Key = key });
    }
}
