using Azure;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// The SDK endpoint across instances of one app (<see cref="SdkEndpointCluster"/>: real cachelets, real gRPC between
/// them, a real Azurite, the real .NET storage SDK): writes forwarded to storage through one instance drop every
/// instance's copy, and create-only uploads through different instances at once make exactly one winner, as storage does.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointClusterTests(AzuriteFixture azurite)
{
    [Theory]
    [InlineData("owner")]
    [InlineData("ownerAsync")]
    public async Task a_write_or_delete_forwarded_to_storage_through_one_instance_drops_the_other_instances_copy(string preset)
    {
        await using SdkEndpointCluster cluster = await SdkEndpointCluster.StartAsync(azurite, preset);
        BlobContainerClient direct = await azurite.CreateContainerAsync("sdkc");
        BlobContainerClient[] via = [cluster.ViaEndpoint(0).GetBlobContainerClient(direct.Name), cluster.ViaEndpoint(1).GetBlobContainerClient(direct.Name)];

        // Every write below goes through instance 0. The key owned by instance 1 is the one that stayed stale before: an
        // owner serves its own copy without asking anyone; the key owned by instance 0 is checked too.
        foreach (int owner in new[] { 1, 0 })
        {
            string name = cluster.NameOwnedBy(owner, direct.Name, $"owned-by-{owner}-");
            string key = $"{direct.Name}/{name}";
            byte[] v1 = Bytes(4000, owner + 1);
            await direct.GetBlobClient(name).UploadAsync(new BinaryData(v1));
            await ReadThroughBothAsync(cluster, via, name, v1);

            // Put Blob with metadata: forwarded (the cache does not keep metadata).
            byte[] v2 = Bytes(5000, owner + 10);
            Response<BlobContentInfo> put = await via[0].GetBlobClient(name).UploadAsync(new BinaryData(v2), new BlobUploadOptions { Metadata = new Dictionary<string, string> { ["step"] = "put" } });
            Response<BlobDownloadResult> read = await via[1].GetBlobClient(name).DownloadContentAsync();
            Assert.Equal(v2, read.Value.Content.ToArray());
            Assert.Equal(put.Value.ETag, read.Value.Details.ETag);
            Assert.Equal("put", read.Value.Details.Metadata["step"]);
            await ReadThroughBothAsync(cluster, via, name, v2);

            // Set Blob Metadata: forwarded; the content stays, the ETag and the metadata change.
            var metadata = await via[0].GetBlobClient(name).SetMetadataAsync(new Dictionary<string, string> { ["step"] = "metadata" });
            read = await via[1].GetBlobClient(name).DownloadContentAsync();
            Assert.Equal(v2, read.Value.Content.ToArray());
            Assert.Equal(metadata.Value.ETag, read.Value.Details.ETag);
            Assert.Equal("metadata", read.Value.Details.Metadata["step"]);
            await ReadThroughBothAsync(cluster, via, name, v2);

            // Delete Blob: the other instance's next read is storage's 404, not its copy.
            await via[0].GetBlobClient(name).DeleteAsync();
            foreach (BlobContainerClient client in via.Reverse())
            {
                RequestFailedException gone = await Assert.ThrowsAsync<RequestFailedException>(() => client.GetBlobClient(name).DownloadContentAsync());
                Assert.Equal((404, "BlobNotFound"), (gone.Status, gone.ErrorCode));
            }

            Assert.False(cluster.Cachelet(0).Contains(key));
            Assert.False(cluster.Cachelet(1).Contains(key));
        }

        // An append blob (Append Block is forwarded): the other instance reads the appended bytes.
        string log = cluster.NameOwnedBy(1, direct.Name, "log-");
        AppendBlobClient straight = direct.GetAppendBlobClient(log);
        await straight.CreateAsync();
        await straight.AppendBlockAsync(new MemoryStream("first;"u8.ToArray()));
        await ReadThroughBothAsync(cluster, via, log, "first;"u8.ToArray());
        await via[0].GetAppendBlobClient(log).AppendBlockAsync(new MemoryStream("second;"u8.ToArray()));
        Assert.Equal("first;second;", (await via[1].GetBlobClient(log).DownloadContentAsync()).Value.Content.ToString());
        Assert.Contains(cluster.Endpoint(0).Requests.Recent($"{direct.Name}/{log}"), r => r is { Operation: "forward-write", Status: 201 });
    }

    [Theory]
    [EveryPreset]
    public async Task create_only_uploads_of_one_blob_through_two_instances_at_once_make_exactly_one_winner_whose_bytes_are_stored(string preset)
    {
        const int Rounds = 8;
        const int PerInstance = 2;
        await using SdkEndpointCluster cluster = await SdkEndpointCluster.StartAsync(azurite, preset);
        BlobContainerClient direct = await azurite.CreateContainerAsync("sdkc");
        BlobContainerClient[] via = [cluster.ViaEndpoint(0).GetBlobContainerClient(direct.Name), cluster.ViaEndpoint(1).GetBlobContainerClient(direct.Name)];
        // The cache's Written event is what fires a blob trigger (the host's BlobTriggerService).
        var written = new ConcurrentQueue<string>();
        cluster.Cachelet(0).Written += (_, e) => written.Enqueue(e.Key);
        cluster.Cachelet(1).Written += (_, e) => written.Enqueue(e.Key);

        for (int round = 0; round < Rounds; round++)
        {
            string name = $"create-{round.ToString(CultureInfo.InvariantCulture)}";
            (int Instance, byte[] Content)[] contenders = [.. Enumerable.Range(0, 2 * PerInstance).Select(c => (c % 2, Bytes(2048 + c, (round * 100) + c)))];
            var go = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Task<int>[] uploads = [.. contenders.Select(async c =>
            {
                await go.Task;
                try
                {
                    // Upload(BinaryData) without overwrite: Put Blob with If-None-Match: *.
                    await via[c.Instance].GetBlobClient(name).UploadAsync(new BinaryData(c.Content));
                    return 201;
                }
                catch (RequestFailedException e) when (e.Status == 409)
                {
                    Assert.Equal("BlobAlreadyExists", e.ErrorCode);
                    return 409;
                }
            })];
            go.SetResult();
            int[] statuses = await Task.WhenAll(uploads);

            Assert.True(statuses.Count(s => s == 201) == 1, $"{preset}, round {round}: statuses {string.Join(", ", statuses)} (instances {string.Join(", ", contenders.Select(c => c.Instance))})");
            Assert.Equal(statuses.Length - 1, statuses.Count(s => s == 409));
            byte[] winner = contenders[Array.IndexOf(statuses, 201)].Content;
            await cluster.Cachelet(0).FlushAsync();
            await cluster.Cachelet(1).FlushAsync();
            Assert.Equal(winner, (await direct.GetBlobClient(name).DownloadContentAsync()).Value.Content.ToArray());
            await ReadThroughBothAsync(cluster, via, name, winner);
            Assert.Single(written, k => k == $"{direct.Name}/{name}");
        }
    }

    /// <summary>Reads <paramref name="name"/> through each instance's endpoint; each must answer <paramref name="expected"/> and keep a copy.</summary>
    private static async Task ReadThroughBothAsync(SdkEndpointCluster cluster, BlobContainerClient[] via, string name, byte[] expected)
    {
        for (int i = 0; i < via.Length; i++)
        {
            Assert.Equal(expected, (await via[i].GetBlobClient(name).DownloadContentAsync()).Value.Content.ToArray());
            Assert.True(cluster.Cachelet(i).Contains($"{via[i].Name}/{name}"), $"instance {i} keeps no copy of {name}");
        }
    }

    private static byte[] Bytes(int size, int seed)
    {
        var content = new byte[size];
        new Random(seed).NextBytes(content);
        return content;
    }
}
