namespace FaaSCache.Caching;

/// <summary>
/// The cachelet's function-facing face: what a host's bindings use to read and write blobs for invocations (§3.2).
/// Reads hand out leases on shared memory; writes follow the app's consistency preset.
/// </summary>
public interface IObjectCache
{
    /// <summary>Raised after a write through this cachelet took effect (cache triggers). Handlers must not block.</summary>
    event EventHandler<BlobWrittenEventArgs>? Written;

    /// <summary>Raised when storage got a write: at once for sync persistence, after the background write for async.</summary>
    event EventHandler<BlobWrittenEventArgs>? Persisted;

    /// <summary>
    /// Reads <paramref name="key"/> (<c>container/blob</c>) into a lease on shared memory: the one read entry (local or
    /// remote, hit or miss, Figure 6). With a <paramref name="follower"/> (progress, optional), a miss this cachelet
    /// downloads from storage is handed to it while it fills, so a reader that streams the object on (the SDK endpoint)
    /// overlaps the download instead of following it (<see cref="DownloadFollower.ServeAsync"/>); the lease comes once the
    /// object is whole. <c>ReadAsync(key)</c> (<see cref="ObjectCacheExtensions"/>) reads without one.
    /// </summary>
    Task<ObjectLease> ReadAsync(string key, DownloadFollower? follower, CancellationToken cancellationToken);

    /// <summary>Writes <paramref name="data"/> to <paramref name="key"/>.</summary>
    Task<WriteReceipt> WriteAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default);

    /// <summary>Writes the rest of <paramref name="data"/> to <paramref name="key"/>.</summary>
    Task<WriteReceipt> WriteAsync(string key, Stream data, CancellationToken cancellationToken = default);

    /// <summary>
    /// Writes a map another process created (a worker's output) by adopting it, without a copy. The map must not be this
    /// cache's own nor held open by another process, and must hold <paramref name="count"/> bytes when given
    /// (<see cref="SharedMemory.SharedMemoryException"/> naming what is wrong otherwise).
    /// </summary>
    Task<WriteReceipt> WriteMapAsync(string key, string mapName, long? count = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Writes <paramref name="data"/> to <paramref name="key"/> only if no blob of that name exists (<c>If-None-Match: *</c>),
    /// atomically across the app's instances; throws <see cref="Storage.BlobAlreadyExistsException"/> when it does.
    /// </summary>
    Task<WriteReceipt> CreateAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default);

    /// <summary>
    /// Storage took a write or a delete of <paramref name="key"/> that did not go through the cache (new ETag
    /// <paramref name="version"/>, null for a delete): every instance's copy of another version is dropped, as after a
    /// cache write under the app's preset.
    /// </summary>
    Task InvalidateEverywhereAsync(string key, string? version, CancellationToken cancellationToken = default);

    /// <summary>Waits until every asynchronous write made so far is in storage.</summary>
    Task FlushAsync(CancellationToken cancellationToken = default);

    /// <summary>True when <paramref name="key"/> matches a <c>doNotCache</c> pattern.</summary>
    bool IsExcluded(string key);
}
