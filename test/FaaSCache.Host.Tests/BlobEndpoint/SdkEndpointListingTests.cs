using Azure.Storage.Blobs.Models;
using static FaaSCache.Host.Tests.BlobEndpoint.SdkEndpointBlobs;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Listings through the SDK endpoint: forwarded to storage, and identical to storage's own (.NET and Node storage SDKs).
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointListingTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task a_listing_is_forwarded_and_identical_to_storages()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        foreach (string name in new[] { "x/1.bin", "x/2 two.bin", "y.bin" })
        {
            await direct.GetBlobClient(name).UploadAsync(new BinaryData(Bytes(7, name.Length)));
        }

        var fromStorage = new List<string>();
        await foreach (BlobItem item in direct.GetBlobsAsync())
        {
            fromStorage.Add($"{item.Name} {item.Properties.ETag} {item.Properties.ContentLength}");
        }

        var viaEndpoint = new List<string>();
        await foreach (BlobItem item in rig.ViaEndpoint().GetBlobContainerClient(container).GetBlobsAsync())
        {
            viaEndpoint.Add($"{item.Name} {item.Properties.ETag} {item.Properties.ContentLength}");
        }

        Assert.Equal(fromStorage, viaEndpoint);
        Assert.Equal(3, viaEndpoint.Count);
    }

    [Fact]
    public async Task the_node_storage_sdks_listing_through_the_endpoint_is_identical_to_storages()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        string[] names = ["x/1.bin", "x/2 two.bin", "y.bin", "z/é.bin", "zz.json"];
        foreach (string name in names)
        {
            await direct.GetBlobClient(name).UploadAsync(new BinaryData(Bytes(7 + name.Length, name.Length)));
        }

        // Listed whole and in pages of 2 (continuation markers) through the endpoint and straight from storage.
        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "list", container);

        Assert.Contains($"list {names.Length} {string.Join(',', names)}", printed, StringComparison.Ordinal);
        Assert.All(rig.Requests.Recent(), r => Assert.Equal("forward", r.Operation));
    }
}
