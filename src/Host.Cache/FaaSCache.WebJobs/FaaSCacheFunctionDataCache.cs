using System.Diagnostics.CodeAnalysis;
using FaaSCache.Caching;
using FaaSCache.Storage;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.WebJobs;

/// <summary>
/// The cachelet as the host's <see cref="IFunctionDataCache"/>, the interface through which the blob extension hands
/// blobs to workers in shared memory. A <see cref="FunctionDataCacheKey"/> is (blob URI, ETag); the URI maps to the
/// cache key <c>container/blobName</c> when it lies in the app's storage account, and anything else is not cached.
/// </summary>
/// <remarks>
/// The blob extension (Microsoft.Azure.WebJobs.Extensions.Storage.Blobs 5.3.10) binds through this cache only when an
/// <see cref="IFunctionDataCache"/> is registered and <see cref="IsEnabled"/> as it initializes. A
/// <c>[Blob(path, FileAccess.Read)] ICacheAwareReadObject</c> fetches the blob's properties and calls <see cref="TryGet"/>
/// with (URI, that ETag) and an active reference: on a hit the caller reads the map, and the binding releases the
/// reference (<see cref="DecrementActiveReference"/>) when the invocation ends; on a miss the caller reads the blob stream
/// (opened If-Match that ETag), writes a map here and offers it through <c>TryPutToCache</c>, which is
/// <see cref="TryPut"/> without delete-on-failure. A <c>FileAccess.Write</c> <c>ICacheAwareWriteObject</c> bound with a
/// <c>SharedMemoryAttribute</c> (the Functions host's path for a worker's output map) is written to storage by the caller
/// and, when the invocation ends, fetches the blob's new ETag and calls <see cref="TryPut"/> with delete-on-failure and no
/// active reference.
/// </remarks>
public sealed class FaaSCacheFunctionDataCache : IFunctionDataCache
{
    private readonly IVersionedCache _cachelet;
    private readonly ICacheAdmin _admin;
    private readonly ILogger _logger;

    /// <summary>Initializes a new instance of the <see cref="FaaSCacheFunctionDataCache"/> class.</summary>
    /// <param name="cachelet">This host instance's cachelet's version-keyed face (owned by the container, not by this object).</param>
    /// <param name="admin">The same cachelet's admin face (its storage account and shared-memory folder).</param>
    /// <param name="logger">Logger.</param>
    public FaaSCacheFunctionDataCache(IVersionedCache cachelet, ICacheAdmin admin, ILogger<FaaSCacheFunctionDataCache>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(cachelet);
        ArgumentNullException.ThrowIfNull(admin);
        _cachelet = cachelet;
        _admin = admin;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <summary>Gets a value indicating whether the cache is on: always, once FaaSCache is added.</summary>
    public bool IsEnabled => true;

    /// <summary>
    /// Finds the object cached for exactly this blob URI and ETag; with <paramref name="isIncrementActiveReference"/>
    /// the caller holds it (it is never evicted) until <see cref="DecrementActiveReference"/>.
    /// </summary>
    public bool TryGet(FunctionDataCacheKey cacheKey, bool isIncrementActiveReference, [MaybeNullWhen(false)] out SharedMemoryMetadata sharedMemoryMeta)
    {
        ArgumentNullException.ThrowIfNull(cacheKey);
        sharedMemoryMeta = null;
        if (!TryGetKey(cacheKey, out string? key, out string? version) ||
            !_cachelet.TryGetVersion(key, version, isIncrementActiveReference, out string mapName, out long length))
        {
            return false;
        }

        sharedMemoryMeta = new SharedMemoryMetadata(mapName, length);
        return true;
    }

    /// <summary>
    /// Caches the map the caller wrote in the cachelet's map directory (<see cref="SharedMemoryMetadata.MemoryMapName"/>)
    /// as this blob at this ETag; on success the cache owns the file. False when the blob is not in the app's account,
    /// the same version is already cached, or it does not fit beside the objects in use; the file is then deleted when
    /// <paramref name="isDeleteOnFailure"/> is set, else left to the caller. A map the cache already holds is never deleted.
    /// </summary>
    public bool TryPut(FunctionDataCacheKey cacheKey, SharedMemoryMetadata sharedMemoryMeta, bool isIncrementActiveReference, bool isDeleteOnFailure)
    {
        ArgumentNullException.ThrowIfNull(cacheKey);
        ArgumentNullException.ThrowIfNull(sharedMemoryMeta);
        string mapName = sharedMemoryMeta.MemoryMapName;
        if (string.IsNullOrEmpty(mapName) || _admin.SharedMemory.Owns(mapName))
        {
            // Already the cache's own file (e.g. one handed out by TryGet): nothing to adopt, nothing to delete.
            return false;
        }

        if (TryGetKey(cacheKey, out string? key, out string? version))
        {
            // The same version again (two invocations missed at once): keep the cached copy, like the host's own cache.
            // Checked without counting an access: a put is not a hit.
            bool duplicate = _cachelet.HasVersion(key, version);
            if (!duplicate && _cachelet.TryAdoptVersion(key, version, mapName, isIncrementActiveReference))
            {
                return true;
            }

            _logger.LogDebug("Not cached: {Key} at {Version} (map {MapName}, {Count} bytes; {Reason})", key, version, mapName, sharedMemoryMeta.Count, duplicate ? "already cached" : "does not fit or cannot be opened");
        }
        else
        {
            _logger.LogDebug("Not cached: {BlobUri} is not a blob of storage account {AccountUri}", cacheKey.Id, _admin.Storage.AccountUri);
        }

        if (isDeleteOnFailure)
        {
            DeleteCallerMap(mapName);
        }

        return false;
    }

    /// <summary>
    /// Removes the blob when exactly this version is cached; false otherwise. An object still in use stays mapped
    /// until its last reference is released.
    /// </summary>
    public bool TryRemove(FunctionDataCacheKey cacheKey)
    {
        ArgumentNullException.ThrowIfNull(cacheKey);
        if (!TryGetKey(cacheKey, out string? key, out string? version))
        {
            return false;
        }

        // Exactly this version, as the host's own cache does; a removal is not a hit.
        return _cachelet.RemoveVersion(key, version);
    }

    /// <summary>Releases one reference taken by <see cref="TryGet"/> or <see cref="TryPut"/>.</summary>
    public void DecrementActiveReference(FunctionDataCacheKey cacheKey)
    {
        ArgumentNullException.ThrowIfNull(cacheKey);
        if (TryGetKey(cacheKey, out string? key, out string? version))
        {
            _cachelet.ReleaseVersion(key, version);
        }
    }

    /// <summary>
    /// Maps a blob URI to its cache key <c>container/blobName</c> (URL-decoded; query and fragment ignored). Works for
    /// the account's own endpoint (<c>https://acct.blob.core.windows.net/c/b</c>) and path-style endpoints such as
    /// Azurite's (<c>http://127.0.0.1:10000/devstoreaccount1/c/b</c>). False for a URI of another account or endpoint.
    /// </summary>
    /// <remarks>
    /// Both forms in which the blob extension writes a <see cref="System.Uri"/> into a <see cref="FunctionDataCacheKey"/>
    /// land on the same key: <see cref="Uri.AbsoluteUri"/> (escaped, <c>a%20b%20</c>: 5.3.10 on reads and on writes) and
    /// <see cref="Uri.ToString"/> (partly unescaped, <c>a b </c>: earlier 5.x releases on one side or both). The blob name
    /// is therefore decoded from the string as given, not from the string parsed again as a URI: parsing trims trailing
    /// spaces, which <see cref="Uri.ToString"/> leaves unescaped at the end of a name such as <c>"notes "</c>. Neither form
    /// has what a parse would rewrite (a <c>.</c> or <c>..</c> segment, a backslash, a control character, leading
    /// whitespace); a string that has it names a blob only after the rewrite, so it is not cached rather than guessed at.
    /// </remarks>
    /// <param name="blobUri">The blob URI.</param>
    /// <param name="key">The cache key.</param>
    /// <returns>True when the blob is in the app's storage account.</returns>
    public bool TryGetCacheKey(string? blobUri, [NotNullWhen(true)] out string? key)
    {
        key = null;
        if (string.IsNullOrEmpty(blobUri) || char.IsWhiteSpace(blobUri[0]) || !Uri.TryCreate(blobUri, UriKind.Absolute, out Uri? blob))
        {
            return false;
        }

        Uri account = _admin.Storage.AccountUri;
        if (!string.Equals(blob.Scheme, account.Scheme, StringComparison.OrdinalIgnoreCase) ||
            !string.Equals(blob.Host, account.Host, StringComparison.OrdinalIgnoreCase) ||
            blob.Port != account.Port)
        {
            return false;
        }

        // The path as written: from the first '/' after "scheme://authority" to the query or fragment. Neither form
        // leaves a '?' or '#' of a blob name unescaped, so the first one starts the query or fragment.
        int authority = blobUri.IndexOf("://", StringComparison.Ordinal);
        int pathStart = authority < 0 ? -1 : blobUri.IndexOf('/', authority + 3);
        if (pathStart < 0)
        {
            return false;
        }

        int pathEnd = blobUri.IndexOfAny(['?', '#'], pathStart);
        string path = pathEnd < 0 ? blobUri[pathStart..] : blobUri[pathStart..pathEnd];
        if (path.Any(c => c == '\\' || char.IsControl(c)) || path.Split('/').Any(segment => Uri.UnescapeDataString(segment) is "." or ".."))
        {
            return false;
        }

        // "" for https://acct.blob.core.windows.net/, "/devstoreaccount1" for a path-style endpoint.
        string accountPath = account.AbsolutePath.TrimEnd('/');
        if (path.Length <= accountPath.Length + 1 ||
            !path.StartsWith(accountPath, StringComparison.OrdinalIgnoreCase) ||
            path[accountPath.Length] != '/')
        {
            return false;
        }

        try
        {
            key = BlobKey.Parse(Uri.UnescapeDataString(path[(accountPath.Length + 1)..])).ToString();
            return true;
        }
        catch (ArgumentException)
        {
            // Not container/blob (e.g. the account root, a container URI or "$root"): not a cacheable blob.
            return false;
        }
    }

    /// <summary>Nothing to do: the container owns the cachelet and disposes it when the host stops.</summary>
    public void Dispose()
    {
    }

    private bool TryGetKey(FunctionDataCacheKey cacheKey, [NotNullWhen(true)] out string? key, [NotNullWhen(true)] out string? version)
    {
        version = cacheKey.Version;
        if (string.IsNullOrEmpty(version) || !TryGetCacheKey(cacheKey.Id, out key))
        {
            key = null;
            version = null;
            return false;
        }

        return true;
    }

    private void DeleteCallerMap(string mapName)
    {
        // Only a flat name inside the map directory: the metadata comes from another process.
        if (mapName.Any(c => !(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.')) || mapName is "." or "..")
        {
            return;
        }

        try
        {
            File.Delete(Path.Combine(_admin.SharedMemory.DirectoryOf(mapName), mapName));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _logger.LogWarning(e, "Could not delete shared-memory map {MapName} after it was not cached", mapName);
        }
    }
}
