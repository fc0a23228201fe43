namespace FaaSCache.WebJobs.Tests;

/// <summary>
/// The host's <see cref="IFunctionDataCache"/> called directly, for the parts of its contract the blob extension cannot be
/// made to reach on demand (eviction while an invocation holds an object, a foreign account, two puts of one version,
/// URI forms it no longer sends). The extension's own sequence (TryGet by (blob URI, ETag), on a miss a map put through
/// TryPut, the reference released when the invocation ends) runs through the real extension in
/// <see cref="BlobExtensionCacheTests"/>.
/// </summary>
[Trait("Category", "Integration")]
public sealed class FaaSCacheFunctionDataCacheTests(AzuriteFixture azurite) : AzuriteTests
{
    private const string CapacityKey = "AzureWebJobs:extensions:faasCache:capacityBytes";
    private const int ObjectSize = 400_000; // two fit in the smallest capacity allowed (1 MiB), three do not

    [Fact]
    public async Task An_object_in_use_is_not_evicted_under_pressure_while_unreferenced_ones_go()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite, new Dictionary<string, string?> { [CapacityKey] = "1048576" });
        IFunctionDataCache cache = host.DataCache;
        Assert.Equal(1048576, host.Cachelet.CapacityBytes);
        BlobContainerClient container = await azurite.CreateContainerAsync("evict");
        var blobs = new Dictionary<string, (FunctionDataCacheKey Key, string Map)>();
        foreach (string name in new[] { "held", "b", "c", "d", "e", "f" })
        {
            byte[] content = Enumerable.Repeat((byte)name[0], ObjectSize).ToArray();
            (FunctionDataCacheKey key, _) = await UploadAsync(container, name, content);
            blobs[name] = (key, SharedMemoryFiles.Write(host.MapDirectory, content));
        }

        bool Put(string name, bool hold) =>
            cache.TryPut(blobs[name].Key, new SharedMemoryMetadata(blobs[name].Map, ObjectSize), isIncrementActiveReference: hold, isDeleteOnFailure: true);
        bool Cached(string name) => cache.TryGet(blobs[name].Key, isIncrementActiveReference: false, out _);

        Assert.True(Put("held", hold: true));
        Assert.True(Put("b", hold: false));
        Assert.True(Put("c", hold: false)); // three objects exceed 1 MiB: the oldest unreferenced object (b) goes, not the held one
        Assert.True(Cached("held"));
        Assert.False(Cached("b"));
        Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, blobs["b"].Map));
        Assert.True(Cached("c"));

        Assert.True(Put("d", hold: false)); // again: c goes, the held object stays although it is older
        Assert.True(Cached("held"));
        Assert.False(Cached("c"));
        Assert.True(Cached("d"));
        Assert.Equal(2, host.Cachelet.Metrics.Snapshot().Evictions);

        // Released, the object is an ordinary candidate again.
        cache.DecrementActiveReference(blobs["held"].Key);
        Assert.True(Put("e", hold: false));
        Assert.True(Put("f", hold: false));
        Assert.False(Cached("held"));
        Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, blobs["held"].Map));
        Assert.True(host.Cachelet.BytesCached <= 1048576);

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task A_blob_of_another_account_is_not_cached_and_the_callers_map_is_deleted_only_when_asked()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite);
        IFunctionDataCache cache = host.DataCache;
        byte[] content = [1, 2, 3];
        string[] foreign =
        [
            "https://otheraccount.blob.core.windows.net/container/blob.bin",
            new Uri(new Uri(azurite.BlobEndpoint.GetLeftPart(UriPartial.Authority)), "otheraccount/container/blob.bin").ToString(),
            new Uri(new Uri(azurite.BlobEndpoint.GetLeftPart(UriPartial.Authority).Replace("127.0.0.1", "localhost", StringComparison.Ordinal)), "devstoreaccount1/container/blob.bin").ToString(),
        ];

        foreach (string uri in foreign)
        {
            var key = new FunctionDataCacheKey(uri, "\"0x1\"");
            Assert.False(cache.TryGet(key, isIncrementActiveReference: true, out _));

            string kept = SharedMemoryFiles.Write(host.MapDirectory, content);
            Assert.False(cache.TryPut(key, new SharedMemoryMetadata(kept, content.Length), isIncrementActiveReference: true, isDeleteOnFailure: false));
            Assert.True(SharedMemoryFiles.Exists(host.MapDirectory, kept));
            File.Delete(Path.Combine(host.MapDirectory, kept)); // it stayed the caller's

            string handedOver = SharedMemoryFiles.Write(host.MapDirectory, content);
            Assert.False(cache.TryPut(key, new SharedMemoryMetadata(handedOver, content.Length), isIncrementActiveReference: true, isDeleteOnFailure: true));
            Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, handedOver));
            cache.DecrementActiveReference(key); // harmless for an object never cached
        }

        Assert.Equal(0, host.Cachelet.Count);
        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task Blob_uris_on_azurites_path_style_endpoint_map_to_container_and_url_decoded_blob_name_in_either_form()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite);
        var cache = Assert.IsType<FaaSCacheFunctionDataCache>(host.DataCache);
        BlobContainerClient container = await azurite.CreateContainerAsync("names");
        const string blobName = "dir/sub dir/h\u00e9llo w\u00f6rld+100%.txt ";
        byte[] content = Encoding.UTF8.GetBytes("odd names");
        (FunctionDataCacheKey key, BlobClient blob) = await UploadAsync(container, blobName, content);

        // Uri.ToString() unescapes the spaces (the trailing one too) and the letters; AbsoluteUri escapes them.
        Assert.Contains("%20", blob.Uri.AbsoluteUri, StringComparison.Ordinal);
        Assert.EndsWith(".txt ", blob.Uri.ToString(), StringComparison.Ordinal);
        Assert.True(cache.TryGetCacheKey(blob.Uri.AbsoluteUri, out string? mapped));
        Assert.Equal($"{container.Name}/{blobName}", mapped);
        Assert.True(cache.TryGetCacheKey(blob.Uri.ToString(), out string? fromToString));
        Assert.Equal(mapped, fromToString);
        Assert.True(cache.TryGetCacheKey(blob.Uri.AbsoluteUri + "?sv=2025-11-05&sig=abc", out string? withSas));
        Assert.Equal(mapped, withSas);
        Assert.True(cache.TryGetCacheKey(blob.Uri.ToString() + "?sv=2025-11-05&sig=a%2Bb", out string? withSasToString));
        Assert.Equal(mapped, withSasToString);
        Assert.False(cache.TryGetCacheKey(container.Uri.AbsoluteUri, out _));
        Assert.False(cache.TryGetCacheKey(azurite.BlobEndpoint.AbsoluteUri, out _));
        Assert.False(cache.TryGetCacheKey("not a uri", out _));

        // What a URI parse would rewrite names another blob than the text says: not cached rather than guessed at.
        string containerUri = container.Uri.AbsoluteUri;
        Assert.False(cache.TryGetCacheKey(containerUri + "/dir/../other.bin", out _));
        Assert.False(cache.TryGetCacheKey(containerUri + "/./other.bin", out _));
        Assert.False(cache.TryGetCacheKey(containerUri + "/dir\\other.bin", out _));
        Assert.False(cache.TryGetCacheKey(" " + blob.Uri.AbsoluteUri, out _));

        string mapName = SharedMemoryFiles.Write(host.MapDirectory, content);
        Assert.True(cache.TryPut(key, new SharedMemoryMetadata(mapName, content.Length), isIncrementActiveReference: false, isDeleteOnFailure: true));
        Assert.True(host.Cachelet.Contains(mapped));
        Assert.True(cache.TryGet(new FunctionDataCacheKey(blob.Uri.AbsoluteUri, key.Version), isIncrementActiveReference: false, out SharedMemoryMetadata? hit));
        Assert.Equal(mapName, hit.MemoryMapName);

        Assert.False(cache.TryRemove(new FunctionDataCacheKey(key.Id, "\"0xOTHER\"")));
        Assert.True(host.Cachelet.Contains(mapped));
        Assert.True(cache.TryRemove(key));
        Assert.False(host.Cachelet.Contains(mapped));
        Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, mapName));

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task A_second_put_of_a_cached_version_keeps_the_cached_map_and_leaves_the_callers_map_to_the_caller()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite);
        IFunctionDataCache cache = host.DataCache;
        BlobContainerClient container = await azurite.CreateContainerAsync("dup");
        byte[] content = Encoding.UTF8.GetBytes("two invocations missed at once");
        (FunctionDataCacheKey key, _) = await UploadAsync(container, "shared.bin", content);

        string firstMap = SharedMemoryFiles.Write(host.MapDirectory, content);
        Assert.True(cache.TryPut(key, new SharedMemoryMetadata(firstMap, content.Length), isIncrementActiveReference: true, isDeleteOnFailure: true));

        // The cache's own map handed back (as after a TryGet): not adopted twice and never deleted.
        Assert.False(cache.TryPut(key, new SharedMemoryMetadata(firstMap, content.Length), isIncrementActiveReference: true, isDeleteOnFailure: true));
        Assert.True(SharedMemoryFiles.Exists(host.MapDirectory, firstMap));

        string secondMap = SharedMemoryFiles.Write(host.MapDirectory, content);
        Assert.False(cache.TryPut(key, new SharedMemoryMetadata(secondMap, content.Length), isIncrementActiveReference: true, isDeleteOnFailure: false));
        Assert.True(SharedMemoryFiles.Exists(host.MapDirectory, secondMap));
        File.Delete(Path.Combine(host.MapDirectory, secondMap));

        Assert.True(cache.TryGet(key, isIncrementActiveReference: false, out SharedMemoryMetadata? hit));
        Assert.Equal(firstMap, hit.MemoryMapName);
        cache.DecrementActiveReference(key);

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    /// <summary>Uploads (or overwrites) a blob; returns the key the blob extension would use: (blob URI, ETag).</summary>
    private static async Task<(FunctionDataCacheKey Key, BlobClient Blob)> UploadAsync(BlobContainerClient container, string name, byte[] content)
    {
        BlobClient blob = container.GetBlobClient(name);
        await blob.UploadAsync(new BinaryData(content), overwrite: true);
        string etag = (await blob.GetPropertiesAsync()).Value.ETag.ToString();
        return (new FunctionDataCacheKey(blob.Uri.ToString(), etag), blob);
    }
}
