using Microsoft.Azure.WebJobs.Description;

namespace FaaSCache.WebJobs.Tests;

/// <summary>What a read through the blob extension saw: the <see cref="ICacheAwareReadObject"/> and what became of it.</summary>
/// <param name="Bound">False when the extension bound null (the blob does not exist).</param>
/// <param name="IsCacheHit">The object came from the cache.</param>
/// <param name="CacheKey">The key the extension built: (blob URI, ETag).</param>
/// <param name="MapName">The map the content was read from (a hit) or written to (a miss).</param>
/// <param name="Content">The content as the worker would read it.</param>
/// <param name="Cached">On a miss, whether <c>TryPutToCache</c> took the map.</param>
internal sealed record ReadObservation(bool Bound, bool IsCacheHit, FunctionDataCacheKey? CacheKey, string? MapName, byte[] Content, bool Cached);

/// <summary>
/// Functions that a WebJobs host with the real blob extension (<c>AddAzureStorageBlobs()</c>) and FaaSCache runs through
/// <see cref="JobHost.CallAsync(System.Reflection.MethodInfo, IDictionary{string, object}, CancellationToken)"/>. Each
/// plays the part the Functions host plays around a worker: for an input it takes the extension's
/// <see cref="ICacheAwareReadObject"/> and, on a miss, copies the blob into a map and offers it to the cache
/// (RpcSharedMemoryDataExtension); for an output it binds <see cref="ICacheAwareWriteObject"/> through the invocation's
/// <see cref="Binder"/> with the worker's map named in a <see cref="SharedMemoryAttribute"/> and copies the map to
/// storage (the host's cache-aware output binding). Maps live in the host's map directory, as a worker's do.
/// </summary>
public static class BlobExtensionFunctions
{
    private static readonly ConcurrentDictionary<string, ReadObservation> Reads = new();
    private static readonly ConcurrentDictionary<string, byte[]> ByteReads = new();

    /// <summary>Reads <c>{container}/{name}</c> as the Functions host does for a worker's blob input.</summary>
    [NoAutomaticTrigger]
    public static async Task Read(
        [Blob("{container}/{name}", FileAccess.Read)] ICacheAwareReadObject? input,
        string container,
        string name,
        string mapDirectory,
        string observation)
    {
        _ = (container, name); // binding data for the path above
        if (input is null)
        {
            Reads[observation] = new ReadObservation(false, false, null, null, [], false);
            return;
        }

        if (input.IsCacheHit)
        {
            // The worker maps the cache's own file: nothing is copied.
            SharedMemoryMetadata cached = input.CacheObject;
            byte[] content = SharedMemoryFiles.Read(mapDirectory, cached.MemoryMapName, cached.Count);
            Reads[observation] = new ReadObservation(true, true, input.CacheKey, cached.MemoryMapName, content, false);
            return;
        }

        byte[] read;
        using (var buffer = new MemoryStream())
        {
            await input.BlobStream.CopyToAsync(buffer);
            read = buffer.ToArray();
        }

        string mapName = SharedMemoryFiles.Write(mapDirectory, read);
        bool taken = input.TryPutToCache(new SharedMemoryMetadata(mapName, read.Length), isIncrementActiveReference: true);
        if (!taken)
        {
            // Not the cache's: the host frees its own map after the invocation.
            File.Delete(Path.Combine(mapDirectory, mapName));
        }

        Reads[observation] = new ReadObservation(true, false, input.CacheKey, mapName, read, taken);
    }

    /// <summary>Writes the worker's output map <paramref name="mapName"/> to <c>{container}/{name}</c> as the Functions host does.</summary>
    [NoAutomaticTrigger]
    public static async Task Write(string container, string name, string mapDirectory, string mapName, long count, Binder binder)
    {
        ArgumentNullException.ThrowIfNull(binder);
        _ = (container, name); // binding data for the path below
        ICacheAwareWriteObject output = await binder.BindAsync<ICacheAwareWriteObject>(
            [new BlobAttribute("{container}/{name}", FileAccess.Write), new SharedMemoryAttribute(mapName, count)],
            CancellationToken.None);
        byte[] content = SharedMemoryFiles.Read(mapDirectory, mapName, count);
        await using Stream blob = output.BlobStream;
        await blob.WriteAsync(content);
        await blob.FlushAsync();

        // When the invocation completes, WebJobs hands the object to the cache (TryPutToCacheAsync): the blob's new ETag,
        // this map, delete-on-failure.
    }

    /// <summary>
    /// Writes <paramref name="text"/> through an <see cref="ICacheAwareWriteObject"/> parameter: bound without a
    /// <see cref="SharedMemoryAttribute"/>, it has no map to offer, so nothing reaches the cache.
    /// </summary>
    [NoAutomaticTrigger]
    public static async Task WriteParameter(
        [Blob("{container}/{name}", FileAccess.Write)] ICacheAwareWriteObject output,
        string container,
        string name,
        string text)
    {
        ArgumentNullException.ThrowIfNull(output);
        _ = (container, name);
        await using Stream blob = output.BlobStream;
        await blob.WriteAsync(System.Text.Encoding.UTF8.GetBytes(text));
    }

    /// <summary>Reads <c>{container}/{name}</c> as <c>byte[]</c>, a binding the extension serves from storage alone.</summary>
    [NoAutomaticTrigger]
    public static void ReadBytes([Blob("{container}/{name}", FileAccess.Read)] byte[] input, string container, string name, string observation)
    {
        _ = (container, name);
        ByteReads[observation] = input;
    }

    /// <summary>The bytes a <see cref="ReadBytes"/> invocation left under <paramref name="observation"/>.</summary>
    internal static byte[] TakeBytes(string observation) =>
        ByteReads.TryRemove(observation, out byte[]? seen) ? seen : throw new Xunit.Sdk.XunitException($"The byte[] read function did not run for '{observation}'.");

    /// <summary>The observation a <see cref="Read"/> invocation left under <paramref name="observation"/>.</summary>
    internal static ReadObservation TakeRead(string observation) =>
        Reads.TryRemove(observation, out ReadObservation? seen) ? seen : throw new Xunit.Sdk.XunitException($"The read function did not run for '{observation}'.");
}
