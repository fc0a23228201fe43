using FaaSCache.Cluster;
using FaaSCache.SharedMemory;

namespace FaaSCache.Caching;

/// <summary>§3.2, the server half: what this cachelet does when other cachelets of the app ask it (as a key's owner).</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Serves a peer's get: with <paramref name="fetchIfMissing"/> (this cachelet is the owner) a miss is fetched
    /// from storage (a remote miss for the caller); without, null when not cached. <c>Hit</c> tells which.
    /// </summary>
    public async Task<(ObjectLease Lease, bool Hit)?> ServePeerGetAsync(string key, bool fetchIfMissing, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        Metrics.PeerServed();
        if (fetchIfMissing)
        {
            ObjectLease lease = await ReadCoreAsync(key, forward: false, cancellationToken).ConfigureAwait(false);
            return (lease, lease.Source == ReadSource.LocalHit);
        }

        lock (_gate)
        {
            if (!_entries.TryGetValue(key, out CacheEntry? entry) || IsExpiredLocked(entry))
            {
                return null;
            }

            entry.RefCount++;
            TouchLocked(entry);
            RecordAccessLocked(key, AccessKind.PeerHit);
            Metrics.Read(ReadSource.LocalHit, entry.Size, forPeer: true);
            return (new ObjectLease(this, entry, entry.Map, key, entry.Version, ReadSource.LocalHit, bytesCopied: 0), true);
        }
    }

    /// <summary>
    /// Serves a peer's write: this cachelet is the owner and commits it under the app's preset; a create-only one
    /// (<paramref name="createOnly"/>) is decided here (<see cref="CreateAsync"/>) and throws
    /// <see cref="FaaSCache.Storage.BlobAlreadyExistsException"/> when the blob exists.
    /// </summary>
    public async Task<PeerWriteResult> AcceptPeerWriteAsync(string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        FaaSCache.Storage.BlobKey.Parse(key);
        SharedMemoryMap map = _shm.Create(length);
        long copied;
        try
        {
            copied = await StreamCopy.FillAsync(content, map, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _shm.Delete(map);
            throw;
        }

        WriteReceipt receipt = await CommitAsync(key, map, forward: false, copied, createOnly, cancellationToken).ConfigureAwait(false);
        return new PeerWriteResult(receipt.Version, receipt.Persisted);
    }

    /// <summary>Serves a peer's version query: the cached version, else storage's (null when the blob does not exist).</summary>
    public async Task<string?> GetOwnerVersionAsync(string key, CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            // A suspect copy (Cachelet.Trust) answers nothing: storage's version is the truth then.
            if (_entries.TryGetValue(key, out CacheEntry? entry) && !IsExpiredLocked(entry)
                && !(RevalidatesAfterChanges && !entry.Dirty && (entry.Suspect || Unsettled)))
            {
                return entry.Version;
            }
        }

        return await StorageVersionAsync(key, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// §4, bandwidth scaling: fetches a range of one version from storage for another instance's parallel load and hands
    /// it on as it arrives (nothing is cached; the requester assembles and checks the object). A storage sample for the
    /// profile, since the bytes cross this instance's storage link.
    /// </summary>
    public async Task<T> ServeRangeLoadAsync<T>(string key, string version, long offset, long length, FaaSCache.Storage.BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        ArgumentNullException.ThrowIfNull(consume);
        Metrics.RangeLoadServed();
        return await FetchRangeFromStorageAsync(key, version, offset, length, consume, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Drops a cached copy of <paramref name="key"/> whose version is not <paramref name="version"/> (the owner wrote a new one).</summary>
    public bool Invalidate(string key, string version)
    {
        var dead = new List<CacheEntry>();
        bool dropped;
        lock (_gate)
        {
            dropped = _entries.TryGetValue(key, out CacheEntry? entry) && entry.Version != version && !entry.Dirty;
            if (dropped)
            {
                DetachLocked(entry!, dead);
            }

            // A read here that began before it may be bringing in the older version: it must not cache it.
            MarkInvalidatedLocked(key, version);
        }

        DeleteMaps(dead);
        if (dropped)
        {
            Metrics.Invalidated();
        }

        return dropped;
    }
}
