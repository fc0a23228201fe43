using Azure.Storage.Blobs.Models;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// The properties Get Blob answers with (Last-Modified, Content-Type, Content-MD5, metadata), kept per key and version
/// beside the cache's bytes: the cache holds content and version only, so the first endpoint read of a version asks
/// storage for them once (in parallel with a miss's GET), and every later read of that version is answered from here.
/// A version storage does not have (an asynchronous write not yet persisted) gets the properties of a blob written
/// now with no headers, remembered so that Last-Modified stays the same from read to read.
/// </summary>
public sealed class BlobPropertiesCache(BlobServiceClient service, TimeProvider time)
{
    private const int MaxEntries = 100_000;
    private readonly ConcurrentDictionary<string, BlobProperties> _byKey = new(StringComparer.Ordinal);

    /// <summary>True when some version of <paramref name="key"/> has properties here.</summary>
    public bool Has(string key) => _byKey.ContainsKey(key);

    /// <summary>Forgets <paramref name="key"/> (it was written or deleted).</summary>
    public void Forget(string key) => _byKey.TryRemove(key, out _);

    /// <summary>The storage SDK's client for <paramref name="key"/> (writes that storage itself must take).</summary>
    public BlobClient Blob(string key)
    {
        BlobKey k = BlobKey.Parse(key);
        return service.GetBlobContainerClient(k.Container).GetBlobClient(k.BlobName);
    }

    /// <summary>Asks storage for the blob's properties; null when it does not exist.</summary>
    public async Task<BlobProperties?> FetchAsync(string key, CancellationToken cancellationToken)
    {
        BlobKey k = BlobKey.Parse(key);
        try
        {
            Response<Azure.Storage.Blobs.Models.BlobProperties> r = await service.GetBlobContainerClient(k.Container).GetBlobClient(k.BlobName)
                .GetPropertiesAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
            Azure.Storage.Blobs.Models.BlobProperties p = r.Value;
            return new BlobProperties(
                p.ETag.ToString(),
                p.ContentLength,
                p.LastModified,
                p.CreatedOn,
                string.IsNullOrEmpty(p.ContentType) ? "application/octet-stream" : p.ContentType,
                p.ContentHash is { Length: > 0 } md5 ? md5 : null,
                new Dictionary<string, string>(p.Metadata, StringComparer.Ordinal),
                p.BlobType switch { BlobType.Page => "PageBlob", BlobType.Append => "AppendBlob", _ => "BlockBlob" },
                p.ContentEncoding,
                p.ContentLanguage,
                p.ContentDisposition,
                p.CacheControl,
                p.AccessTier?.ToString() ?? "Hot");
        }
        catch (RequestFailedException e) when (e.Status == 404)
        {
            return null;
        }
    }

    /// <summary>
    /// The properties of <paramref name="key"/> at <paramref name="version"/>: remembered, else from
    /// <paramref name="pending"/> (a fetch started with the read) or a new fetch, else those of a headerless write now.
    /// </summary>
    public async Task<BlobProperties> ResolveAsync(string key, string version, long length, Task<BlobProperties?>? pending, CancellationToken cancellationToken)
    {
        string quoted = BlobHeaders.Quote(version);
        if (_byKey.TryGetValue(key, out BlobProperties? known) && BlobHeaders.Quote(known.ETag) == quoted)
        {
            return known;
        }

        BlobProperties? fetched = null;
        try
        {
            fetched = await (pending ?? FetchAsync(key, cancellationToken)).ConfigureAwait(false);
        }
        catch (RequestFailedException)
        {
            // Storage could not say (throttled, unreachable): the read itself succeeded, so answer with what is known.
        }

        if (fetched is null || BlobHeaders.Quote(fetched.ETag) != quoted)
        {
            DateTimeOffset now = time.GetUtcNow();
            fetched = new BlobProperties(quoted, length, now, now, "application/octet-stream", null, new Dictionary<string, string>());
        }

        if (_byKey.Count >= MaxEntries)
        {
            _byKey.Clear();
        }

        _byKey[key] = fetched;
        return fetched;
    }
}
