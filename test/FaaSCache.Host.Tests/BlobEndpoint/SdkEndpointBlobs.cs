namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>What the SdkEndpoint*Tests share: a new container in the collection's Azurite, and seeded random content.</summary>
internal static class SdkEndpointBlobs
{
    /// <summary>A new container in Azurite, with <paramref name="blobs"/> uploaded straight to it.</summary>
    public static async Task<(BlobContainerClient Direct, string Name)> NewContainerAsync(SdkEndpointRig rig, params (string Name, byte[] Content)[] blobs)
    {
        BlobContainerClient container = await rig.Azurite.CreateContainerAsync("sdk");
        foreach ((string name, byte[] content) in blobs)
        {
            await container.GetBlobClient(name).UploadAsync(new BinaryData(content));
        }

        return (container, container.Name);
    }

    /// <summary>Seeded random content: the same size and seed give the same bytes.</summary>
    public static byte[] Bytes(int size, int seed)
    {
        var content = new byte[size];
        new Random(seed).NextBytes(content);
        return content;
    }
}
