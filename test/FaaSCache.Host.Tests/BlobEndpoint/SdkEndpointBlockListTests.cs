using Azure;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;
using static FaaSCache.Host.Tests.BlobEndpoint.SdkEndpointBlobs;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Put Block List through the SDK endpoint: a list naming blocks put through the endpoint is resolved there and written
/// through the cache; one naming blocks already committed in storage is forwarded with the blocks put here (.NET and Python).
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointBlockListTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task a_block_list_naming_the_blocks_of_a_commit_made_through_the_endpoint_resolves_them_there_and_writes_through_the_cache()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlockBlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlockBlobClient("append.bin");
        byte[][] blocks = [Bytes(1000, 21), Bytes(2000, 22), Bytes(3000, 23)];
        string[] ids = [.. Enumerable.Range(0, 3).Select(i => Convert.ToBase64String(Encoding.ASCII.GetBytes($"block-{i:000}")))];
        await via.StageBlockAsync(ids[0], new MemoryStream(blocks[0]));
        await via.StageBlockAsync(ids[1], new MemoryStream(blocks[1]));
        await via.CommitBlockListAsync(ids[..2]);

        // An append as the SDKs do it: the committed ids again (sent as Latest, resolving to committed) and a new block.
        await via.StageBlockAsync(ids[2], new MemoryStream(blocks[2]));
        await via.CommitBlockListAsync(ids);

        byte[] expected = [.. blocks.SelectMany(b => b)];
        Assert.Equal(expected, (await direct.GetBlobClient("append.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(2, rig.Cachelet.GetStatistics($"{container}/append.bin")!.Writes);
        Assert.Equal(["commit", "commit"], [.. rig.Requests.Recent($"{container}/append.bin").Where(r => r.Operation == "commit").Select(r => r.Operation)]);
        Assert.All(rig.Requests.Recent($"{container}/append.bin"), r => Assert.InRange(r.Status, 200, 299));
        rig.ReadSources.Clear();
        Assert.Equal(expected, (await via.DownloadContentAsync()).Value.Content.ToArray());
        Assert.Equal(["lh"], [.. rig.ReadSources]);

        // Committed with a block left out and one repeated, as storage allows.
        await via.CommitBlockListAsync([ids[2], ids[0], ids[0]]);
        byte[] reordered = [.. blocks[2], .. blocks[0], .. blocks[0]];
        Assert.Equal(reordered, (await direct.GetBlobClient("append.bin").DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task a_block_list_naming_blocks_committed_in_storage_is_forwarded_with_the_blocks_put_here_and_the_cached_copy_dropped()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        BlockBlobClient straight = direct.GetBlockBlobClient("appended.bin");
        byte[][] blocks = [Bytes(1000, 31), Bytes(2000, 32), Bytes(3000, 33)];
        string[] ids = [.. Enumerable.Range(0, 3).Select(i => Convert.ToBase64String(Encoding.ASCII.GetBytes($"block-{i:000}")))];
        await straight.StageBlockAsync(ids[0], new MemoryStream(blocks[0]));
        await straight.StageBlockAsync(ids[1], new MemoryStream(blocks[1]));
        await straight.CommitBlockListAsync(ids[..2]);
        BlockBlobClient via = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlockBlobClient("appended.bin");
        byte[] before = [.. blocks[0], .. blocks[1]];
        Assert.Equal(before, (await via.DownloadContentAsync()).Value.Content.ToArray());
        Assert.True(rig.Cachelet.Contains($"{container}/appended.bin"));

        await via.StageBlockAsync(ids[2], new MemoryStream(blocks[2]));
        Response<BlobContentInfo> committed = await via.CommitBlockListAsync(ids);

        byte[] expected = [.. blocks.SelectMany(b => b)];
        Assert.Equal(expected, (await straight.DownloadContentAsync()).Value.Content.ToArray());
        BlockList list = (await straight.GetBlockListAsync(BlockListTypes.Committed)).Value;
        Assert.Equal(ids, list.CommittedBlocks.Select(b => b.Name));
        Assert.Equal((await straight.GetPropertiesAsync()).Value.ETag, committed.Value.ETag);
        Assert.False(rig.Cachelet.Contains($"{container}/appended.bin"));
        Assert.Equal(expected, (await via.DownloadContentAsync()).Value.Content.ToArray());

        // A list naming a block no one put: storage's own refusal.
        RequestFailedException refused = await Assert.ThrowsAsync<RequestFailedException>(() => via.CommitBlockListAsync([ids[0], Convert.ToBase64String("never-put"u8.ToArray())]));
        Assert.Equal(400, refused.Status);
        Assert.Equal("InvalidBlockList", refused.ErrorCode);
        Assert.Equal(expected, (await straight.DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task the_python_storage_sdk_commits_a_list_naming_committed_blocks_through_the_endpoint()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);

        string printed = await rig.RunSdkCheckAsync("sdk-check.py", "committed", container);

        byte[] expected = [.. Enumerable.Repeat((byte)'a', 1000), .. Enumerable.Repeat((byte)'b', 2000), .. Enumerable.Repeat((byte)'c', 3000)];
        Assert.Equal(expected, (await direct.GetBlobClient("py/committed.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.Contains($"sha256: {Convert.ToHexStringLower(SHA256.HashData(expected))}", printed, StringComparison.Ordinal);
        Assert.Equal(2, rig.Cachelet.GetStatistics($"{container}/py/committed.bin")!.Writes);
    }
}
