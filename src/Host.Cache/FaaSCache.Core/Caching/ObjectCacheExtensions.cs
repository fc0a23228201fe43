namespace FaaSCache.Caching;

/// <summary>The common form of the cache's one read entry.</summary>
public static class ObjectCacheExtensions
{
    /// <summary>
    /// Reads <paramref name="key"/> (<c>container/blob</c>) into a lease on shared memory (no download follower).
    /// Under <c>strong</c> a cached copy costs one conditional request (304, no download).
    /// Throws <see cref="Storage.BlobNotFoundException"/> when the blob does not exist.
    /// </summary>
    public static Task<ObjectLease> ReadAsync(this IObjectCache cache, string key, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(cache);
        return cache.ReadAsync(key, follower: null, cancellationToken);
    }
}
