using FaaSCache.Core.Tests.Caching;

namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>Unload snapshots in real blob storage (Azurite): written at stop, read back whole at the next load.</summary>
[Trait("Category", "Integration")]
public sealed class SnapshotStoreOnAzuriteTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_snapshot_written_at_unload_reads_back_entry_for_entry()
    {
        await using var h = await CacheletHarness.CreateOnAzuriteAsync(azurite);
        var store = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        var snapshots = new SnapshotStore(store, "app-" + Guid.NewGuid().ToString("N")[..8]);
        await h.UploadDirectAsync("model.onnx", CacheletHarness.RandomBytes(64 * 1024));
        await h.UploadDirectAsync("labels.txt", Encoding.UTF8.GetBytes("cat\ndog\n"));
        for (int n = 0; n < 2; n++)
        {
            (await h.Cachelet.ReadAsync(h.Key("model.onnx"))).Dispose();
        }

        await h.Cachelet.WriteAsync(h.Key("out.json"), Encoding.UTF8.GetBytes("{}"));
        (await h.Cachelet.ReadAsync(h.Key("labels.txt"))).Dispose();
        using var daemon = new LoadDaemon(h.Cachelet, snapshots, RingOwnerLocator.SingleInstance(h.Cachelet.InstanceId));

        await daemon.StopAsync(CancellationToken.None);

        SnapshotListing listing = await snapshots.ReadAsync(DateTimeOffset.UtcNow.AddMinutes(-5), 10);
        Assert.Equal(0, listing.Skipped);
        UnloadSnapshot read = Assert.Single(listing.Snapshots);
        Assert.Equal(snapshots.KeyOf(read), daemon.Status().LastSnapshot);
        Assert.Equal(snapshots.AppName, read.AppName);
        Assert.Equal(h.Cachelet.InstanceId, read.InstanceId);
        UnloadSnapshot expected = UnloadSnapshots.FromStatistics(snapshots.AppName, h.Cachelet.InstanceId, read.TakenAt, h.Cachelet.GetAllStatistics());
        Assert.Equal(expected.Entries, read.Entries);
        SnapshotEntry model = read.Entries.Single(e => e.Key == h.Key("model.onnx"));
        Assert.Equal((1L, 1L, 64L * 1024), (model.OwnHits, model.OwnMisses, model.SizeBytes));
        Assert.Equal(await h.VersionAsync("model.onnx"), model.Version);
        Assert.Equal(1, read.Entries.Single(e => e.Key == h.Key("out.json")).OwnWrites);
    }

    [Fact]
    public async Task A_corrupt_snapshot_blob_is_skipped_by_name()
    {
        var store = AzureBlobStore.FromConnectionString(azurite.ConnectionString);
        var snapshots = new SnapshotStore(store, "app-" + Guid.NewGuid().ToString("N")[..8]);
        DateTimeOffset now = DateTimeOffset.UtcNow;
        await snapshots.WriteAsync(new UnloadSnapshot { AppName = snapshots.AppName, InstanceId = "a", TakenAt = now, Entries = [new SnapshotEntry { Key = "c/k", OwnHits = 1 }] });
        await store.UploadAsync($"{SnapshotStore.Container}/{snapshots.Prefix}{now.UtcTicks:D19}-b.json", new MemoryStream("[1,2"u8.ToArray()));

        SnapshotListing listing = await snapshots.ReadAsync(now.AddMinutes(-1), 10);

        Assert.Equal(1, listing.Skipped);
        Assert.Equal("a", Assert.Single(listing.Snapshots).InstanceId);
    }
}
