using Microsoft.Extensions.Hosting;

namespace FaaSCache.WebJobs.Tests;

/// <summary>
/// The WebJobs face under its real client: WebJobs hosts with <c>AddAzureStorageBlobs().AddFaaSCache()</c>, the blob
/// extension 5.3.10 binding <see cref="ICacheAwareReadObject"/> and <see cref="ICacheAwareWriteObject"/> through the
/// cachelet's <see cref="IFunctionDataCache"/>, functions invoked with <c>JobHost.CallAsync</c>, storage a real Azurite.
/// </summary>
[Trait("Category", "Integration")]
public sealed class BlobExtensionCacheTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly System.Reflection.MethodInfo ReadFunction = typeof(BlobExtensionFunctions).GetMethod(nameof(BlobExtensionFunctions.Read))!;
    private static readonly System.Reflection.MethodInfo WriteFunction = typeof(BlobExtensionFunctions).GetMethod(nameof(BlobExtensionFunctions.Write))!;

    [Fact]
    public async Task A_second_read_through_the_blob_extension_is_a_hit_on_the_map_the_first_read_cached()
    {
        await using CacheHost host = await StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-read");
        byte[] content = RandomNumberGenerator.GetBytes(300_000);
        BlobClient blob = container.GetBlobClient("models/model.bin");
        await blob.UploadAsync(new BinaryData(content));
        string etag = (await blob.GetPropertiesAsync()).Value.ETag.ToString();
        string key = $"{container.Name}/models/model.bin";

        ReadObservation first = await ReadAsync(host, container.Name, "models/model.bin");
        Assert.False(first.IsCacheHit);
        Assert.True(first.Cached, "the cache took the map the host wrote on the miss");
        Assert.Equal(content, first.Content);
        Assert.Equal(blob.Uri.AbsoluteUri, first.CacheKey!.Id); // 5.3.10 names the blob by its escaped URI
        Assert.Equal(etag, first.CacheKey.Version);
        Assert.True(host.Cachelet.Contains(key));

        ReadObservation second = await ReadAsync(host, container.Name, "models/model.bin");
        Assert.True(second.IsCacheHit);
        Assert.Equal(first.MapName, second.MapName);
        Assert.Equal(content, second.Content);
        Assert.Equal(first.CacheKey, second.CacheKey);
        var metrics = host.Cachelet.Metrics.Snapshot();
        Assert.Equal(1, metrics.LocalHits);
        Assert.Equal(1, metrics.LocalMisses);

        // Both invocations let go of the object when they ended: removed now, its map goes at once.
        Assert.True(host.DataCache.TryRemove(second.CacheKey!));
        Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, first.MapName!));

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task A_write_through_the_blob_extension_caches_the_workers_map_under_the_etag_storage_gave_it()
    {
        await using CacheHost host = await StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-write");
        byte[] content = RandomNumberGenerator.GetBytes(200_000);

        string written = await WriteAsync(host, container.Name, "out/result.bin", content);

        BlobClient blob = container.GetBlobClient("out/result.bin");
        Assert.Equal(content, (await blob.DownloadContentAsync()).Value.Content.ToArray());
        string etag = (await blob.GetPropertiesAsync()).Value.ETag.ToString();
        Assert.True(host.Cachelet.HasVersion($"{container.Name}/out/result.bin", etag));
        Assert.True(SharedMemoryFiles.Exists(host.MapDirectory, written), "the cache adopted the worker's map rather than copying it");

        ReadObservation read = await ReadAsync(host, container.Name, "out/result.bin");
        Assert.True(read.IsCacheHit);
        Assert.Equal(written, read.MapName);
        Assert.Equal(content, read.Content);

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task Two_webjobs_hosts_of_one_app_each_hit_the_map_their_first_read_cached_and_a_write_on_one_is_a_new_version_to_the_other()
    {
        var settings = new Dictionary<string, string?>
        {
            ["FaaSCache:AppName"] = "webjobs-ext-" + Guid.NewGuid().ToString("N")[..8],
            ["AzureWebJobs:extensions:faasCache:membership:heartbeatInterval"] = "00:00:01",
            ["AzureWebJobs:extensions:faasCache:membership:failureTimeout"] = "00:00:05",
        };
        await using CacheHost a = await StartAsync(settings);
        await using CacheHost b = await StartAsync(settings);
        await WaitForMembersAsync(2, a, b);
        Assert.NotEqual(a.Cachelet.InstanceId, b.Cachelet.InstanceId);
        Assert.NotEqual(a.MapDirectory, b.MapDirectory);

        BlobContainerClient container = await azurite.CreateContainerAsync("ext-two");
        byte[] v1 = Encoding.UTF8.GetBytes("version one, read by both instances");
        await container.GetBlobClient("shared.bin").UploadAsync(new BinaryData(v1));

        ReadObservation a1 = await ReadAsync(a, container.Name, "shared.bin");
        ReadObservation b1 = await ReadAsync(b, container.Name, "shared.bin");
        Assert.False(a1.IsCacheHit);
        Assert.False(b1.IsCacheHit);
        Assert.True(a1.Cached && b1.Cached);
        Assert.True(SharedMemoryFiles.Exists(a.MapDirectory, a1.MapName!));
        Assert.True(SharedMemoryFiles.Exists(b.MapDirectory, b1.MapName!));

        ReadObservation a2 = await ReadAsync(a, container.Name, "shared.bin");
        ReadObservation b2 = await ReadAsync(b, container.Name, "shared.bin");
        Assert.True(a2.IsCacheHit);
        Assert.True(b2.IsCacheHit);
        Assert.Equal(a1.MapName, a2.MapName);
        Assert.Equal(b1.MapName, b2.MapName);
        Assert.Equal(v1, a2.Content);
        Assert.Equal(v1, b2.Content);

        // Instance a writes a new version: it caches the worker's map under the new ETag and serves it next.
        byte[] v2 = Encoding.UTF8.GetBytes("version two, written through instance a");
        string written = await WriteAsync(a, container.Name, "shared.bin", v2);
        ReadObservation a3 = await ReadAsync(a, container.Name, "shared.bin");
        Assert.True(a3.IsCacheHit);
        Assert.Equal(written, a3.MapName);
        Assert.Equal(v2, a3.Content);
        Assert.NotEqual(a1.CacheKey!.Version, a3.CacheKey!.Version);
        Assert.False(SharedMemoryFiles.Exists(a.MapDirectory, a1.MapName!), "the old version's map went when the new one replaced it");

        // Instance b still holds version one, but the extension asks for the ETag storage has now: a miss, never stale.
        ReadObservation b3 = await ReadAsync(b, container.Name, "shared.bin");
        Assert.False(b3.IsCacheHit);
        Assert.Equal(a3.CacheKey, b3.CacheKey);
        Assert.Equal(v2, b3.Content);
        Assert.True(b3.Cached);
        Assert.False(SharedMemoryFiles.Exists(b.MapDirectory, b1.MapName!));
        ReadObservation b4 = await ReadAsync(b, container.Name, "shared.bin");
        Assert.True(b4.IsCacheHit);
        Assert.Equal(b3.MapName, b4.MapName);

        await b.StopAsync();
        await a.StopAsync();
        Assert.Empty(a.MapFiles());
        Assert.Empty(b.MapFiles());
    }

    [Theory]
    [InlineData("dir/sub dir/h\u00e9llo w\u00f6rld.txt")]
    [InlineData("#1 100%.bin")]
    [InlineData("\u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb \ud83d\ude00.bin")]
    [InlineData("q?x=1&y=2")]
    [InlineData("a%20b")]
    [InlineData("notes ")]
    public async Task A_name_that_needs_escaping_is_one_container_slash_name_key_for_the_extensions_write_and_read_and_for_either_uri_form(string name)
    {
        await using CacheHost host = await StartAsync();
        var cache = Assert.IsType<FaaSCacheFunctionDataCache>(host.DataCache);
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-names");
        byte[] content = Encoding.UTF8.GetBytes("content of " + name);
        string key = $"{container.Name}/{name}";

        string written = await WriteAsync(host, container.Name, name, content);
        Assert.True(host.Cachelet.Contains(key), $"the write cached '{key}'");
        Assert.Equal(1, host.Cachelet.Count);

        ReadObservation read = await ReadAsync(host, container.Name, name);
        Assert.True(read.IsCacheHit);
        Assert.Equal(written, read.MapName);
        Assert.Equal(content, read.Content);

        // 5.3.10 names the blob by its escaped URI; earlier releases used Uri.ToString(), which leaves spaces and
        // non-ASCII letters unescaped: the same key, and a hit on the same map.
        Uri uri = container.GetBlobClient(name).Uri;
        Assert.Equal(uri.AbsoluteUri, read.CacheKey!.Id);
        Assert.True(cache.TryGetCacheKey(uri.AbsoluteUri, out string? fromAbsolute));
        Assert.True(cache.TryGetCacheKey(uri.ToString(), out string? fromToString));
        Assert.Equal(key, fromAbsolute);
        Assert.Equal(key, fromToString);
        Assert.True(cache.TryGet(new FunctionDataCacheKey(uri.ToString(), read.CacheKey.Version), isIncrementActiveReference: false, out SharedMemoryMetadata? hit));
        Assert.Equal(written, hit.MemoryMapName);

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task After_the_blob_is_overwritten_in_storage_the_next_read_misses_and_its_map_replaces_the_old_one()
    {
        await using CacheHost host = await StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-version");
        BlobClient blob = container.GetBlobClient("data.txt");
        await blob.UploadAsync(new BinaryData("version one"));
        ReadObservation first = await ReadAsync(host, container.Name, "data.txt");
        Assert.True((await ReadAsync(host, container.Name, "data.txt")).IsCacheHit);

        await blob.UploadAsync(new BinaryData("version two, longer"), overwrite: true);
        ReadObservation second = await ReadAsync(host, container.Name, "data.txt");
        Assert.False(second.IsCacheHit);
        Assert.Equal(first.CacheKey!.Id, second.CacheKey!.Id);
        Assert.NotEqual(first.CacheKey.Version, second.CacheKey.Version);
        Assert.Equal("version two, longer", Encoding.UTF8.GetString(second.Content));
        Assert.True(second.Cached);
        Assert.False(SharedMemoryFiles.Exists(host.MapDirectory, first.MapName!));

        ReadObservation third = await ReadAsync(host, container.Name, "data.txt");
        Assert.True(third.IsCacheHit);
        Assert.Equal(second.MapName, third.MapName);
        Assert.False(host.DataCache.TryGet(first.CacheKey, isIncrementActiveReference: false, out _));

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task A_read_of_a_missing_blob_binds_null_and_caches_nothing()
    {
        await using CacheHost host = await StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-missing");

        ReadObservation read = await ReadAsync(host, container.Name, "nothing-here.bin");

        Assert.False(read.Bound);
        Assert.Equal(0, host.Cachelet.Count);
        Assert.Empty(host.MapFiles());
    }

    [Fact]
    public async Task Only_cache_aware_bindings_reach_the_cache_not_a_byte_array_input_nor_a_write_without_a_workers_map()
    {
        await using CacheHost host = await StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("ext-plain");
        byte[] content = Encoding.UTF8.GetBytes("read as byte[]");
        await container.GetBlobClient("plain.bin").UploadAsync(new BinaryData(content));

        string observation = Guid.NewGuid().ToString("N");
        await host.JobHost.CallAsync(typeof(BlobExtensionFunctions).GetMethod(nameof(BlobExtensionFunctions.ReadBytes))!, new Dictionary<string, object>
        {
            ["container"] = container.Name,
            ["name"] = "plain.bin",
            ["observation"] = observation,
        });
        Assert.Equal(content, BlobExtensionFunctions.TakeBytes(observation));

        // An ICacheAwareWriteObject parameter is written to storage, but with no map named there is nothing to cache.
        await host.JobHost.CallAsync(typeof(BlobExtensionFunctions).GetMethod(nameof(BlobExtensionFunctions.WriteParameter))!, new Dictionary<string, object>
        {
            ["container"] = container.Name,
            ["name"] = "written.txt",
            ["text"] = "written without a map",
        });
        Assert.Equal("written without a map", (await container.GetBlobClient("written.txt").DownloadContentAsync()).Value.Content.ToString());

        var metrics = host.Cachelet.Metrics.Snapshot();
        Assert.Equal(0, metrics.LocalHits + metrics.LocalMisses);
        Assert.Equal(0, host.Cachelet.Count);
        Assert.Empty(host.MapFiles());
    }

    private Task<CacheHost> StartAsync(IReadOnlyDictionary<string, string?>? settings = null) =>
        CacheHost.StartAsync(azurite, settings, b =>
        {
            b.AddAzureStorageBlobs();
            b.AddFaaSCache();
            b.Services.AddSingleton<ITypeLocator>(new CacheHost.FunctionTypes(typeof(BlobExtensionFunctions)));
        });

    private static async Task<ReadObservation> ReadAsync(CacheHost host, string container, string name)
    {
        string observation = Guid.NewGuid().ToString("N");
        await host.JobHost.CallAsync(ReadFunction, new Dictionary<string, object>
        {
            ["container"] = container,
            ["name"] = name,
            ["mapDirectory"] = host.MapDirectory,
            ["observation"] = observation,
        });
        return BlobExtensionFunctions.TakeRead(observation);
    }

    /// <summary>Writes <paramref name="content"/> as a worker's output map and has the function write it out; returns the map's name.</summary>
    private static async Task<string> WriteAsync(CacheHost host, string container, string name, byte[] content)
    {
        string mapName = SharedMemoryFiles.Write(host.MapDirectory, content);
        await host.JobHost.CallAsync(WriteFunction, new Dictionary<string, object>
        {
            ["container"] = container,
            ["name"] = name,
            ["mapDirectory"] = host.MapDirectory,
            ["mapName"] = mapName,
            ["count"] = (long)content.Length,
        });
        return mapName;
    }

    private static async Task WaitForMembersAsync(int count, params CacheHost[] hosts)
    {
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (hosts.Any(h => h.Host.Services.GetRequiredService<IOwnerLocator>().Current.Members.Count < count))
        {
            await Task.Delay(100, deadline.Token);
        }
    }
}
