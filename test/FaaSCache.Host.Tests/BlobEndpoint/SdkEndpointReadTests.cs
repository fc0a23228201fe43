using Azure;
using Azure.Storage;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;
using static FaaSCache.Host.Tests.BlobEndpoint.SdkEndpointBlobs;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Reads through the SDK endpoint with the real .NET and Node storage SDKs (a real cachelet, a real Azurite, real HTTP):
/// whole, ranged and streamed downloads byte-identical to storage's, served from the cache after the first, and conditional
/// reads answered as storage answers them.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointReadTests(AzuriteFixture azurite)
{
    [Theory]
    [InlineData(1)]
    [InlineData(1024)]
    [InlineData((9 * 1024 * 1024) + 7)]
    public async Task whole_and_ranged_downloads_are_byte_identical_and_the_second_read_is_a_local_hit(int size)
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        byte[] content = Bytes(size, seed: size);
        await direct.GetBlobClient("dir/a b+é.bin").UploadAsync(new BinaryData(content));
        BlobClient blob = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("dir/a b+é.bin");

        Assert.Equal(content, (await blob.DownloadContentAsync()).Value.Content.ToArray());
        var target = new MemoryStream();
        // DownloadTo: a first 1 MiB ranged GET, then ranged GETs pinned to its ETag (4 in flight).
        await blob.DownloadToAsync(target, new BlobDownloadToOptions { TransferOptions = new StorageTransferOptions { InitialTransferSize = 1 << 20, MaximumTransferSize = 1 << 20, MaximumConcurrency = 4 } });
        Assert.Equal(content, target.ToArray());
        await using (Stream read = await blob.OpenReadAsync(new BlobOpenReadOptions(allowModifications: false) { BufferSize = 1 << 20 }))
        {
            var streamed = new MemoryStream();
            await read.CopyToAsync(streamed);
            Assert.Equal(content, streamed.ToArray());
        }

        Response<BlobDownloadResult> range = await blob.DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(size / 3, Math.Max(1, size / 2)) });
        Assert.Equal(content.AsSpan(size / 3, Math.Min(Math.Max(1, size / 2), size - (size / 3))).ToArray(), range.Value.Content.ToArray());
        BlobProperties viaEndpoint = (await blob.GetPropertiesAsync()).Value;
        BlobProperties fromStorage = (await direct.GetBlobClient("dir/a b+é.bin").GetPropertiesAsync()).Value;
        Assert.Equal(fromStorage.ETag, viaEndpoint.ETag);
        Assert.Equal(fromStorage.ContentLength, viaEndpoint.ContentLength);
        Assert.Equal(fromStorage.LastModified, viaEndpoint.LastModified);
        Assert.Equal(fromStorage.ContentHash, viaEndpoint.ContentHash);

        string[] sources = [.. rig.ReadSources];
        Assert.Equal("lm", sources[0]);
        Assert.All(sources.Skip(1), s => Assert.Equal("lh", s));
    }

    [Fact]
    public async Task a_miss_is_streamed_on_while_it_fills_the_cache_whole_or_from_the_middle_and_the_next_read_hits()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        byte[] content = Bytes(6 * 1024 * 1024, 77);
        await direct.GetBlobClient("whole.bin").UploadAsync(new BinaryData(content));
        await direct.GetBlobClient("middle.bin").UploadAsync(new BinaryData(content));
        BlobContainerClient via = rig.ViaEndpoint().GetBlobContainerClient(container);

        Assert.Equal(content, (await via.GetBlobClient("whole.bin").DownloadContentAsync()).Value.Content.ToArray());
        Response<BlobDownloadResult> middle = await via.GetBlobClient("middle.bin").DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(3_000_000, 1_500_000) });
        Assert.Equal(content.AsSpan(3_000_000, 1_500_000).ToArray(), middle.Value.Content.ToArray());
        Assert.Equal(content, (await via.GetBlobClient("middle.bin").DownloadContentAsync()).Value.Content.ToArray());

        Assert.Equal(["lm", "lm", "lh"], [.. rig.ReadSources]);
        Assert.True(rig.Cachelet.Contains($"{container}/whole.bin"));
        Assert.Equal(1, rig.Cachelet.GetStatistics($"{container}/middle.bin")!.LocalHits);
    }

    [Fact]
    public async Task conditional_reads_answer_304_and_412_and_a_range_past_the_end_416_as_storage_does()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        await direct.GetBlobClient("c.bin").UploadAsync(new BinaryData(Bytes(100, 1)));
        BlobClient blob = rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobClient("c.bin");
        ETag etag = (await blob.GetPropertiesAsync()).Value.ETag;

        RequestFailedException notModified = await Assert.ThrowsAsync<RequestFailedException>(() => blob.GetPropertiesAsync(new BlobRequestConditions { IfNoneMatch = etag }));
        Assert.Equal(304, notModified.Status);
        RequestFailedException failed = await Assert.ThrowsAsync<RequestFailedException>(() => blob.DownloadContentAsync(new BlobDownloadOptions { Conditions = new BlobRequestConditions { IfMatch = new ETag("\"0x8D0000000000000\"") } }));
        Assert.Equal(412, failed.Status);
        Assert.Equal("ConditionNotMet", failed.ErrorCode);
        RequestFailedException past = await Assert.ThrowsAsync<RequestFailedException>(() => blob.DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(100, 10) }));
        Assert.Equal(416, past.Status);
        Assert.Equal("InvalidRange", past.ErrorCode);
        RequestFailedException missing = await Assert.ThrowsAsync<RequestFailedException>(() => blob.GetParentBlobContainerClient().GetBlobClient("nope.bin").DownloadContentAsync());
        Assert.Equal(404, missing.Status);
        Assert.Equal("BlobNotFound", missing.ErrorCode);
        Assert.False(await blob.GetParentBlobContainerClient().GetBlobClient("nope.bin").ExistsAsync());
    }

    [Theory]
    [InlineData(1024)]
    [InlineData((9 * 1024 * 1024) + 7)]
    public async Task the_node_storage_sdks_whole_and_ranged_downloads_are_byte_identical_to_storages_and_hit_after_the_first(int size)
    {
        byte[] content = Bytes(size, seed: size + 1);
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (_, string container) = await NewContainerAsync(rig, ("node/a b+é.bin", content));
        int offset = size / 3;
        int count = Math.Min(Math.Max(1, size / 2), size - offset);

        // The script compares each download (bytes and headers) with storage's own and exits non-zero on a difference.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "downloads", container, "node/a b+é.bin", $"{offset}", $"{count}");

        string whole = Convert.ToHexStringLower(SHA256.HashData(content));
        Assert.Contains($"downloads whole {size} {whole}", printed, StringComparison.Ordinal);
        Assert.Contains($"downloads chunked {size} {whole}", printed, StringComparison.Ordinal);
        Assert.Contains($"downloads range bytes {offset}-{offset + count - 1}/{size} {count} {Convert.ToHexStringLower(SHA256.HashData(content.AsSpan(offset, count)))}", printed, StringComparison.Ordinal);
        // Served by the cache: the first read a local miss, every later one (the HEAD, the ranges) a local hit.
        string?[] sources = [.. rig.Requests.Recent($"{container}/node/a b+é.bin").Where(r => r.Operation == "read").Select(r => r.Source)];
        Assert.True(sources.Length >= 4, string.Join(",", sources));
        Assert.Equal("lm", sources[0]);
        Assert.All(sources.Skip(1), s => Assert.Equal("lh", s));
    }

    [Fact]
    public async Task the_node_storage_sdk_gets_304_and_412_from_the_endpoint_as_from_storage()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (_, string container) = await NewContainerAsync(rig, ("node/c.bin", Bytes(100, 11)));

        // Each conditional call is made through the endpoint and straight to storage; the script exits non-zero unless
        // the SDK surfaces the same status and error code from both.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "conditions", container, "node/c.bin");

        Assert.Contains("conditions download-if-none-match 304", printed, StringComparison.Ordinal);
        Assert.Contains("conditions properties-if-none-match 304", printed, StringComparison.Ordinal);
        Assert.Contains("conditions download-if-match 412 ConditionNotMet", printed, StringComparison.Ordinal);
        Assert.Contains("conditions properties-if-match 412", printed, StringComparison.Ordinal);
        Assert.Contains(rig.Requests.Recent($"{container}/node/c.bin"), r => r is { Operation: "read", Status: 304 });
        Assert.Contains(rig.Requests.Recent($"{container}/node/c.bin"), r => r is { Operation: "read", Status: 412 });
    }
}
