using Azure;
using Azure.Storage;
using static FaaSCache.Host.Tests.BlobEndpoint.SdkEndpointBlobs;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// Requests the SDK endpoint refuses as storage refuses them: signed with another account key or not signed at all
/// (.NET and Node storage SDKs), while a SAS made with the account key is served.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class SdkEndpointRefusalTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task a_request_signed_with_another_key_or_not_at_all_is_refused_as_storage_refuses_it()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig);
        await direct.GetBlobClient("s.bin").UploadAsync(new BinaryData(Bytes(10, 5)));
        string wrongKey = Convert.ToBase64String(Encoding.ASCII.GetBytes("not the account key, 64 bytes long..............................."));
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05);
        options.Retry.MaxRetries = 0;
        var forged = new BlobClient(new Uri($"{rig.Address.BlobEndpoint}/{container}/s.bin"), new StorageSharedKeyCredential(AzuriteServer.AccountName, wrongKey), options);

        RequestFailedException refused = await Assert.ThrowsAsync<RequestFailedException>(() => forged.DownloadContentAsync());
        Assert.Equal(403, refused.Status);
        Assert.Equal("AuthenticationFailed", refused.ErrorCode);
        RequestFailedException write = await Assert.ThrowsAsync<RequestFailedException>(() => forged.UploadAsync(new BinaryData(Bytes(3, 6)), overwrite: true));
        Assert.Equal(403, write.Status);
        Assert.Equal(Bytes(10, 5), (await direct.GetBlobClient("s.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.False(rig.Cachelet.Contains($"{container}/s.bin"));

        // A SAS made with the account key is served; storage's own answer would be the same.
        Uri sas = direct.GetBlobClient("s.bin").GenerateSasUri(Azure.Storage.Sas.BlobSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1));
        var viaSas = new BlobClient(new Uri($"{rig.Address.BlobEndpoint}/{container}/s.bin{sas.Query}"), options);
        Assert.Equal(Bytes(10, 5), (await viaSas.DownloadContentAsync()).Value.Content.ToArray());
    }

    [Fact]
    public async Task the_node_storage_sdk_with_another_account_key_is_refused_as_storage_refuses_it()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        (BlobContainerClient direct, string container) = await NewContainerAsync(rig, ("node/s.bin", Bytes(10, 12)));

        string printed = await rig.RunSdkCheckAsync("sdk-check.js", "forged", container, "node/s.bin");

        Assert.Contains("forged read 403 AuthenticationFailed", printed, StringComparison.Ordinal);
        Assert.Contains("forged write 403 AuthenticationFailed", printed, StringComparison.Ordinal);
        Assert.Equal(Bytes(10, 12), (await direct.GetBlobClient("node/s.bin").DownloadContentAsync()).Value.Content.ToArray());
        Assert.False(rig.Cachelet.Contains($"{container}/node/s.bin"));
    }
}
