namespace FaaSCache.Caching;

/// <summary>The cachelet's peer-server face: what the peer service calls when other cachelets of the app ask (§3.2).</summary>
public interface IPeerServingCache
{
    /// <summary>
    /// Serves a peer's get: with <paramref name="fetchIfMissing"/> (this cachelet is the owner) a miss is fetched from
    /// storage (a remote miss for the caller); without, null when not cached. <see cref="PeerGetServe.Hit"/> tells which.
    /// With <paramref name="follow"/>, a miss this cachelet downloads is handed over while it downloads
    /// (<see cref="PeerGetServe.Progress"/>): the transfer overlaps the download; without, the lease is whole.
    /// </summary>
    Task<PeerGetServe?> ServePeerGetAsync(string key, bool fetchIfMissing, bool follow, CancellationToken cancellationToken = default);

    /// <summary>
    /// Serves a peer's write: this cachelet is the owner and commits it under the app's preset. A create-only write
    /// (<paramref name="createOnly"/>) is made only if the blob does not exist, decided here; otherwise
    /// <see cref="FaaSCache.Storage.BlobAlreadyExistsException"/>.
    /// </summary>
    Task<PeerWriteResult> AcceptPeerWriteAsync(string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default);

    /// <summary>Serves a peer's version query: the cached version, else storage's (null when the blob does not exist).</summary>
    Task<string?> GetOwnerVersionAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>
    /// §4, bandwidth scaling: fetches a range of version <paramref name="version"/> of <paramref name="key"/> from storage
    /// for another instance's parallel load and hands it to <paramref name="consume"/> as it arrives; nothing is cached.
    /// </summary>
    Task<T> ServeRangeLoadAsync<T>(string key, string version, long offset, long length, FaaSCache.Storage.BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>Drops a cached copy of <paramref name="key"/> whose version is not <paramref name="version"/>.</summary>
    bool Invalidate(string key, string version);
}
