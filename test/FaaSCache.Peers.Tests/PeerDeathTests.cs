namespace FaaSCache.Peers.Tests;

/// <summary>An owner that dies in the middle of a transfer costs the reader a storage read, never a partial object.</summary>
[Trait("Category", "Integration")]
public sealed class PeerDeathTests(AzuriteFixture azurite) : AzuriteTests
{
    private const int Size = 50_000_000;

    [Fact]
    public async Task Killing_the_owner_process_mid_transfer_leaves_no_partial_object_and_the_reader_falls_back_to_storage()
    {
        string[] members = ["a", "b"];
        BlobContainerClient container = await azurite.CreateContainerAsync("death");
        var ring = new RingOwnerLocator("a", members);
        string key = Enumerable.Range(0, 10_000).Select(i => $"{container.Name}/big{i}").First(k => ring.GetOwner(k) == "b");
        byte[] content = PeerCluster.RandomBytes(Size, seed: 9);
        await container.GetBlobClient(BlobKey.Parse(key).BlobName).UploadAsync(new BinaryData(content), overwrite: true);

        using var ownerShm = new TempShmDirectory();
        using var readerShm = new TempShmDirectory();
        await using PeerServerProcess.Handle owner = await PeerServerProcess.StartAsync("b", members, ownerShm.Path, azurite.ConnectionString, PeerCluster.App, preload: key, slowAfter: Size / 2);
        var directory = new StaticPeerDirectory();
        directory.Set("b", owner.Endpoint);
        using var client = new GrpcPeerClient(directory, PeerKey.FromConnectionString(azurite.ConnectionString, PeerCluster.App));
        await using Cachelet reader = new CacheletBuilder("a", [readerShm.Path])
            .WithOptions(new FaaSCacheOptions { Consistency = ConsistencyPreset.OwnerLocalRead, CapacityBytes = 256L << 20 })
            .WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString))
            .WithOwners(ring)
            .WithPeers(client)
            .Build();

        Task<ObjectLease> read = reader.ReadAsync(key);
        await owner.WaitForLineAsync(PeerServerProcess.HalfwayLine, TimeSpan.FromSeconds(60));

        // Half-way: the remote copy is being written into a map that nobody can see yet.
        Assert.False(read.IsCompleted);
        string partial = Assert.Single(Directory.GetFiles(reader.SharedMemory.MapDirectory));
        Assert.False(reader.Contains(key));

        await owner.KillAsync();
        using ObjectLease lease = await read.WaitAsync(TimeSpan.FromSeconds(120));

        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.True(lease.Span.SequenceEqual(content));
        CacheletCounters counters = reader.Metrics.Snapshot();
        Assert.Equal(1, counters.OwnerUnreachable);
        Assert.Equal(0, counters.BytesFromPeers);
        Assert.Equal(Size, counters.BytesFetched);
        Assert.False(File.Exists(partial));
        Assert.Equal([lease.MapPath], Directory.GetFiles(reader.SharedMemory.MapDirectory));
    }
}
