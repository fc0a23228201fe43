using FaaSCache.Cluster;
using FaaSCache.Ownership;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>
/// §3.2, Figure 6: the miss, in one place. A read that found nothing usable here comes to <see cref="MissAsync"/>, which
/// decides: the key's owner (remote hit or remote miss), a previous owner's copy after a membership change, or storage
/// (a local miss, or a fallback when the owner is unreachable); a storage GET runs alone or, when the planner says N
/// instances are faster, as a scaled load (§4). Every storage GET of a read, a version check and a pre-warm load start
/// here, and every new map a read fills is made by <see cref="FillNewMapAsync{T}"/>.
/// </summary>
public sealed partial class Cachelet
{
    /// <summary>A miss: the owner (remote hit or miss), or a previous owner after a membership change, else storage.</summary>
    private async Task<ObjectLease> MissAsync(string key, bool forward, CancellationToken cancellationToken)
    {
        ReadSource fromStorage = ReadSource.LocalMiss;
        long writesBefore = WriteSequence;
        // Without a membership lease this cachelet's ring may be stale: storage, not whoever it thinks owns the key.
        if (forward && _peers is not null && (_owners.HoldsLease || !RevalidatesAfterChanges))
        {
            string owner = _owners.GetOwner(key);
            if (owner != _owners.SelfId)
            {
                try
                {
                    PeerFetchResult<Received>? fetched = await _peers.GetAsync(owner, key, true, (length, _, content, token) => ReceiveAsync(length, content, cache: true, token, fromPeer: true), cancellationToken)
                        .ConfigureAwait(false);
                    if (fetched is { } got)
                    {
                        return Admit(key, got.Version, got.Value, got.OwnerHit ? ReadSource.RemoteHit : ReadSource.RemoteMiss, writesBefore);
                    }
                }
                catch (PeerUnavailableException e)
                {
                    OwnerUnreachable(owner, key, e);
                    fromStorage = ReadSource.StorageFallback;
                }
            }
            else if (PreviousOwner(key) is { } previous)
            {
                // The key moved to us: take the old owner's copy if it has one (no storage traffic).
                try
                {
                    PeerFetchResult<Received>? moved = await _peers.GetAsync(previous, key, false, (length, _, content, token) => ReceiveAsync(length, content, cache: true, token, fromPeer: true), cancellationToken)
                        .ConfigureAwait(false);
                    if (moved is { } got)
                    {
                        // A handed-over copy is checked when reads need storage's version, or the key moved (Cachelet.Trust).
                        if ((!ChecksStorageVersion && !RevalidatesAfterChanges) || await IsStorageVersionAsync(key, got.Version, got.Value, cancellationToken).ConfigureAwait(false))
                        {
                            return Admit(key, got.Version, got.Value, ReadSource.RemoteHit, writesBefore);
                        }
                    }
                }
                catch (PeerUnavailableException e)
                {
                    _logger.LogDebug(e, "Previous owner {Member} of {Key} could not hand it over", previous, key);
                }
            }
        }

        return await FetchAsync(key, fromStorage, cache: true, forPeer: !forward, cancellationToken).ConfigureAwait(false);
    }

    private async Task<ObjectLease> FetchAsync(string key, ReadSource source, bool cache, bool forPeer, CancellationToken cancellationToken)
    {
        long writesBefore = WriteSequence;
        FetchResult<Received> result = await FetchFromStorageAsync(key, null, cache, cancellationToken).ConfigureAwait(false);
        return Admit(key, result.ETag!, result.Value!, source, writesBefore, forPeer);
    }

    /// <summary>
    /// Receives a body from storage: alone, or, when the planner finds that N instances download it faster, as a scaled
    /// load whose requester reads only its share of this response. Either way the transfer is a profile sample.
    /// </summary>
    private async Task<Received> ReceiveFromStorageAsync(string key, string etag, long length, Stream content, bool cache, long started, CancellationToken cancellationToken)
    {
        long firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
        TimeSpan latency = System.Diagnostics.Stopwatch.GetElapsedTime(started, firstByte);
        if (PlanScaledLoad(length) is { } plan)
        {
            return await ReceiveScaledAsync(key, etag, length, content, cache, latency, plan, cancellationToken).ConfigureAwait(false);
        }

        Received received = await ReceiveAsync(length, content, cache, cancellationToken, publishVersion: etag).ConfigureAwait(false);
        _bandwidth?.Profiler.RecordStorage(length, latency, System.Diagnostics.Stopwatch.GetElapsedTime(firstByte));
        return received;
    }

    /// <summary>
    /// One storage GET into a map; when a scaled load finds that the blob was overwritten mid-way (a helper's If-Match
    /// range refused), nothing of either version is kept and the GET starts again for the new version.
    /// </summary>
    private async Task<FetchResult<Received>> FetchFromStorageAsync(string key, string? ifNoneMatch, bool cache, CancellationToken cancellationToken)
    {
        const int Attempts = 3;
        for (int attempt = 1; ; attempt++)
        {
            long started = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                return await _storage.FetchAsync(key, ifNoneMatch, (length, etag, content, token) => ReceiveFromStorageAsync(key, etag, length, content, cache, started, token), cancellationToken)
                    .ConfigureAwait(false);
            }
            catch (BlobVersionChangedException e) when (attempt < Attempts)
            {
                _logger.LogInformation("{Key} changed while it was being loaded ({Reason}); loading the new version (attempt {Attempt} of {Attempts})", key, e.Message, attempt + 1, Attempts);
            }
        }
    }

    /// <summary>
    /// Strong reads check every cached copy against storage, a handed-over one too (the blob may have changed outside the
    /// cache since the previous owner read it): one version request. A copy that is not storage's version is dropped.
    /// </summary>
    private async Task<bool> IsStorageVersionAsync(string key, string version, Received received, CancellationToken cancellationToken)
    {
        bool current = false;
        try
        {
            Metrics.VersionCheck();
            current = await _storage.GetVersionAsync(key, cancellationToken).ConfigureAwait(false) == version;
            return current;
        }
        finally
        {
            if (!current)
            {
                if (received.Reserved)
                {
                    lock (_gate)
                    {
                        UnreserveLocked(received.Map.ContentLength);
                    }
                }

                _shm.Delete(received.Map);
            }
        }
    }

    private string? PreviousOwner(string key)
    {
        if (_previousRing is not { IsEmpty: false } previous)
        {
            return null;
        }

        string owner = previous.GetOwner(key);
        return owner != _owners.SelfId && _owners.Current.Contains(owner) ? owner : null;
    }

    /// <summary>
    /// Streams a body straight into a new map (no intermediate copy of the object); leaves nothing behind on failure.
    /// A storage download of <paramref name="publishVersion"/> is followed by a waiting peer's read when there is one.
    /// </summary>
    private async Task<Received> ReceiveAsync(long length, Stream content, bool cache, CancellationToken cancellationToken, bool fromPeer = false, string? publishVersion = null)
    {
        FillProgress? progress = null;
        Filled<long> filled = (await FillNewMapAsync(
            length,
            cache ? Reserve.Evicting : Reserve.None,
            async map =>
            {
                progress = fromPeer ? null : Publish(map, publishVersion);
                return await StreamCopy.FillAsync(content, map, cancellationToken, progress).ConfigureAwait(false);
            },
            (map, e) => DeleteFailedFill(map, progress, e)).ConfigureAwait(false))!.Value;
        if (fromPeer)
        {
            Metrics.FromPeer(length);
        }
        else
        {
            Metrics.Fetched(length);
        }

        return new Received(filled.Map, filled.Reserved, filled.Value);
    }

    /// <summary>
    /// §3.3: the Load Daemon's storage GET of <paramref name="key"/>, into free capacity only (a pre-warm never evicts);
    /// the value is null when the object does not fit.
    /// </summary>
    private Task<FetchResult<SharedMemoryMap?>> LoadIntoFreeSpaceAsync(string key, CancellationToken cancellationToken)
        => _storage.FetchAsync(key, null, async (length, _, content, token) =>
        {
            Filled<long>? filled = await FillNewMapAsync(length, Reserve.FreeSpaceOnly, map => StreamCopy.FillAsync(content, map, token)).ConfigureAwait(false);
            if (filled is not null)
            {
                Metrics.Fetched(length);
            }

            return filled?.Map;
        }, cancellationToken);

    /// <summary>How a new map's bytes are counted against the capacity.</summary>
    private enum Reserve
    {
        /// <summary>Not cached (served once): nothing reserved.</summary>
        None,

        /// <summary>Cached: room is made by evicting (§3.4) when needed; served uncached if none can be made.</summary>
        Evicting,

        /// <summary>Cached only in free capacity, never evicting (pre-warm): no map is made when it does not fit.</summary>
        FreeSpaceOnly,
    }

    /// <summary>A new map filled by <see cref="FillNewMapAsync{T}"/>: whether its bytes are reserved in the cache, and what the fill returned.</summary>
    private readonly record struct Filled<T>(SharedMemoryMap Map, bool Reserved, T Value);

    /// <summary>
    /// Reserve, create a map, fill it, clean up on failure: the one way a read, a scaled load and a pre-warm bring bytes
    /// into a new map. A map that landed in the spill folder is served but never cached. On failure the reservation is
    /// returned and the map deleted (by <paramref name="deleteFailed"/> when the caller published it to waiting peers).
    /// Null only with <see cref="Reserve.FreeSpaceOnly"/>, when the object does not fit.
    /// </summary>
    private async Task<Filled<T>?> FillNewMapAsync<T>(long length, Reserve reserve, Func<SharedMemoryMap, Task<T>> fill, Action<SharedMemoryMap, Exception>? deleteFailed = null)
    {
        bool reserved = false;
        if (reserve == Reserve.Evicting)
        {
            var dead = new List<CacheEntry>();
            lock (_gate)
            {
                reserved = TryReserveLocked(length, dead);
            }

            DeleteMaps(dead);
        }
        else if (reserve == Reserve.FreeSpaceOnly)
        {
            lock (_gate)
            {
                if (!_entries.TryReserveFree(length, roomElsewhere: SharedMemoryMap.HeaderSize + length <= _shm.LargestFreeBytes()))
                {
                    return null;
                }

                reserved = true;
            }
        }

        SharedMemoryMap? map = null;
        try
        {
            map = _shm.Create(length);
            reserved = KeepReservation(map, reserved);
            if (reserve == Reserve.FreeSpaceOnly && !reserved)
            {
                _shm.Delete(map);
                return null;
            }

            return new Filled<T>(map, reserved, await fill(map).ConfigureAwait(false));
        }
        catch (Exception e)
        {
            if (reserved)
            {
                lock (_gate)
                {
                    UnreserveLocked(length);
                }
            }

            if (map is not null)
            {
                if (deleteFailed is null)
                {
                    _shm.Delete(map);
                }
                else
                {
                    deleteFailed(map, e);
                }
            }

            throw;
        }
    }

    /// <summary>
    /// Caches what a read received, unless a write to <paramref name="key"/> landed here, or an invalidation of another
    /// version arrived, after <paramref name="writesBefore"/> (the read's start): the read may have got the older version,
    /// which must not replace the newer one.
    /// </summary>
    private ObjectLease Admit(string key, string etag, Received received, ReadSource source, long writesBefore, bool forPeer = false)
    {
        CacheEntry? entry = null;
        var dead = new List<CacheEntry>();
        bool owned = _owners.IsLocalOwner(key);
        lock (_gate)
        {
            if (received.Reserved && ((_entries.TryGetValue(key, out CacheEntry? current) && current.WriteSequence > writesBefore) || InvalidatedSinceLocked(key, etag, writesBefore)))
            {
                // Served to this reader (it overlapped the write, or an invalidation of what it may have got), never cached.
                UnreserveLocked(received.Map.ContentLength);
            }
            else if (received.Reserved)
            {
                entry = new CacheEntry(key, etag, received.Map, owned, IsLarge(received.Map.ContentLength)) { RefCount = 1 };
                InsertLocked(entry, dead);
            }

            RecordAccessLocked(key, AccessOf(source, forPeer));
        }

        DeleteMaps(dead);
        Metrics.Read(source, received.Map.ContentLength, forPeer);
        return new ObjectLease(this, entry, received.Map, key, etag, source, received.BytesCopied);
    }

    /// <summary>A body received into a new map: whether its bytes are reserved in the cache, and how many bytes were written into it.</summary>
    private readonly record struct Received(SharedMemoryMap Map, bool Reserved, long BytesCopied);

    /// <summary>Storage's version of <paramref name="key"/> (a HEAD): a peer's version query when this copy cannot answer it.</summary>
    private Task<string?> StorageVersionAsync(string key, CancellationToken cancellationToken) => _storage.GetVersionAsync(key, cancellationToken);

    /// <summary>
    /// §4, a helper's share of another instance's scaled load: one range of one version from storage, handed on as it
    /// arrives (nothing is cached); a storage sample for the profile, since the bytes cross this instance's storage link.
    /// </summary>
    private async Task<T> FetchRangeFromStorageAsync<T>(string key, string version, long offset, long length, BlobBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        FetchResult<T> result = await _storage.FetchRangeAsync(
            key,
            offset,
            length,
            version,
            async (count, etag, content, token) =>
            {
                long firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
                T value = await consume(count, etag, content, token).ConfigureAwait(false);
                _bandwidth?.Profiler.RecordStorage(count, System.Diagnostics.Stopwatch.GetElapsedTime(started, firstByte), System.Diagnostics.Stopwatch.GetElapsedTime(firstByte));
                Metrics.Fetched(count);
                return value;
            },
            cancellationToken).ConfigureAwait(false);
        return result.Value!;
    }
}
