namespace FaaSCache.Caching;

/// <summary>
/// §3.2 writes: through the key's owner (this cachelet with one instance), persisted per the preset (Table 3), one write
/// per key at a time; asynchronous persistence through the <see cref="WriteBackQueue"/> this path owns. Every write, the
/// application's or a peer's that this cachelet commits as the owner, comes through <see cref="CommitAsync"/>.
/// </summary>
internal sealed class WritePath
{
    private readonly CacheletCore _core;
    private readonly Invalidations _invalidations;
    private readonly KeyedAsyncLock _keyWrites = new();

    public WritePath(CacheletCore core, Invalidations invalidations)
    {
        _core = core;
        _invalidations = invalidations;
        WriteBack = new WriteBackQueue(
            // Tagged with the version the write was announced under (cache triggers, other members): a poll that lists the
            // blob later knows it for the same write.
            (entry, token) => UploadAsync(entry.Key, entry.Map, token, writeId: entry.Version),
            WriteBackEnded,
            core.Logger);
    }

    /// <summary>Gets the asynchronous writes not yet in storage.</summary>
    public WriteBackQueue WriteBack { get; }

    /// <summary>
    /// True when this cachelet decides a create-only write for every instance: it is the key's owner (writes go to the
    /// owner, and reach here only on the owner or when the owner is gone, then persisted synchronously), or it is alone.
    /// </summary>
    private bool DecidesCreates => _core.Peers is null || _core.WritesToOwner;

    /// <summary>
    /// A new map holding <paramref name="data"/>, written through its file (pwrite, as a fill from storage is): a copy
    /// through this process's fresh mapping would fault on every 4 KiB page (~13 µs each on this project's VMs).
    /// </summary>
    public SharedMemoryMap MapOf(ReadOnlyMemory<byte> data)
    {
        SharedMemoryMap map = _core.Shm.Create(data.Length);
        try
        {
            map.Write(data.Span, 0);
            return map;
        }
        catch
        {
            _core.Shm.Delete(map);
            throw;
        }
    }

    /// <summary>A new map filled from <paramref name="content"/>'s next <paramref name="length"/> bytes, and how many were copied.</summary>
    public async Task<(SharedMemoryMap Map, long Copied)> MapOfAsync(Stream content, long length, CancellationToken cancellationToken)
    {
        SharedMemoryMap map = _core.Shm.Create(length);
        try
        {
            return (map, await StreamCopy.FillAsync(content, map, cancellationToken).ConfigureAwait(false));
        }
        catch
        {
            _core.Shm.Delete(map);
            throw;
        }
    }

    /// <summary>
    /// Takes ownership of <paramref name="map"/> (not yet in the index) and applies the preset and the persistence mode.
    /// <paramref name="forward"/> is false when committing a peer's write as the key's owner; <paramref name="copiedIn"/>
    /// is what filling the map cost (0 when a worker's map was adopted as it was); <paramref name="createOnly"/> writes
    /// only if the blob does not exist (<see cref="Cachelet.CreateAsync"/>).
    /// </summary>
    public async Task<WriteReceipt> CommitAsync(string key, SharedMemoryMap map, bool forward, long copiedIn, bool createOnly, CancellationToken cancellationToken)
    {
        if (forward)
        {
            _core.Metrics.Write();
        }
        else
        {
            _core.Metrics.PeerWrite();
        }

        try
        {
            await _core.Trust.WaitForLeaseAsync(key, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _core.Shm.Delete(map);
            throw;
        }

        PersistMode persist = _core.Options.EffectivePersist;
        if (forward && _core.Peers is not null && _core.WritesToOwner && !_core.DoNotCache.IsMatch(key))
        {
            (WriteReceipt? forwarded, bool ownerGone) = await ForwardWriteAsync(key, map, createOnly, cancellationToken).ConfigureAwait(false);
            if (forwarded is not null)
            {
                // The owner committed it (and raises the events there: one cache trigger per write).
                return forwarded with { BytesCopied = forwarded.BytesCopied + copiedIn };
            }

            // The owner is gone and never saw the write: this instance is not the key's owner, so a write-back queued
            // here would leave storage (where readers fall back while the owner is gone) without the acknowledged
            // write until it ran; commit it to storage before acknowledging, whatever the preset's persist mode.
            persist = ownerGone ? PersistMode.Sync : persist;
        }

        WriteReceipt receipt = await CommitCoreAsync(key, map, forward ? AccessKind.Write : AccessKind.PeerWrite, persist, createOnly, cancellationToken).ConfigureAwait(false);
        receipt = receipt with { BytesCopied = copiedIn };
        await _invalidations.InvalidateOthersAsync(receipt.Key, receipt.Version).ConfigureAwait(false);
        var args = new BlobWrittenEventArgs(receipt.Key, receipt.Version, receipt.Persisted || receipt.Persist != PersistMode.None);
        if (receipt.Persisted)
        {
            _core.Facade.OnPersisted(args);
        }

        _core.Facade.OnWritten(args);
        return receipt;
    }

    private async Task<WriteReceipt> CommitCoreAsync(string key, SharedMemoryMap map, AccessKind access, PersistMode mode, bool createOnly, CancellationToken cancellationToken)
    {
        if (_core.DoNotCache.IsMatch(key))
        {
            try
            {
                return new WriteReceipt(key, await UploadAsync(key, map, createOnly, cancellationToken).ConfigureAwait(false), false, true, PersistMode.Sync);
            }
            finally
            {
                _core.Shm.Delete(map);
            }
        }

        if (createOnly && mode == PersistMode.Async && !DecidesCreates)
        {
            // No owner decides for the others (a local preset with peers): storage does, so this write is persisted now.
            mode = PersistMode.Sync;
        }

        if (mode == PersistMode.Sync)
        {
            // Owner, then storage: the cache shows the new version only once storage has it. One write per key at a time,
            // so the copy kept is the one storage kept (two concurrent uploads could otherwise land in one order and be
            // cached in the other, leaving an older copy served in front of a newer stored write).
            string etag;
            bool cached;
            using (await _keyWrites.LockAsync(key, cancellationToken).ConfigureAwait(false))
            {
                try
                {
                    etag = await UploadAsync(key, map, createOnly, cancellationToken).ConfigureAwait(false);
                }
                catch
                {
                    _core.Shm.Delete(map);
                    throw;
                }

                cached = TryInsertWritten(key, etag, map, dirty: false, access);
            }

            if (!cached)
            {
                _core.Shm.Delete(map);
            }

            return new WriteReceipt(key, etag, cached, true, mode);
        }

        string version = _core.NextLocalVersion(mode == PersistMode.Async ? "pending" : "local");
        // Held from the create-only check to the insert, and by every write of the key, so that no write lands in between.
        IDisposable held;
        try
        {
            held = await _keyWrites.LockAsync(key, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _core.Shm.Delete(map);
            throw;
        }

        using (held)
        {
            try
            {
                if (createOnly && await ExistsForCreateAsync(key, mode, cancellationToken).ConfigureAwait(false))
                {
                    throw AlreadyExists(key);
                }
            }
            catch
            {
                _core.Shm.Delete(map);
                throw;
            }

            if (TryInsertWritten(key, version, map, dirty: mode == PersistMode.Async, access))
            {
                return new WriteReceipt(key, version, true, false, mode);
            }

            if (mode == PersistMode.Async)
            {
                // No room to hold it until the background write: persist now rather than lose it.
                try
                {
                    return new WriteReceipt(key, await UploadAsync(key, map, createOnly, cancellationToken).ConfigureAwait(false), false, true, mode);
                }
                finally
                {
                    _core.Shm.Delete(map);
                }
            }
        }

        _core.Shm.Delete(map);
        throw new CacheCapacityException(
            $"Cannot keep '{key}' ({map.ContentLength} bytes): the cache ({_core.Entries.CapacityBytes} bytes, {_core.Entries.Bytes} in use or pinned) has no room for it and persist is 'none', so the write would be lost.");
    }

    private bool TryInsertWritten(string key, string version, SharedMemoryMap map, bool dirty, AccessKind access)
    {
        var dead = new List<CacheEntry>();
        bool owned = _core.Owners.IsLocalOwner(key);
        CacheEntry? entry = null;
        lock (_core.Gate)
        {
            _core.RecordAccessLocked(key, access);
            if (map.IsShared && _core.TryReserveLocked(map.ContentLength, dead))
            {
                // A pending write-back holds a reference, so the object stays until storage has it.
                entry = new CacheEntry(key, version, map, owned, _core.IsLarge(map.ContentLength)) { Dirty = dirty, RefCount = dirty ? 1 : 0, WriteSequence = _core.NextWriteSequenceLocked() };
                _core.InsertLocked(entry, dead);
            }
            else if (_core.Entries.TryGetValue(key, out CacheEntry? stale) && !stale.Dirty)
            {
                _core.NextWriteSequenceLocked();
                // The new version is not cached: an older cached one must not be served either.
                _core.DetachLocked(stale, dead);
            }
        }

        _core.DeleteMaps(dead);
        if (entry is { Dirty: true })
        {
            WriteBack.Enqueue(entry);
        }

        return entry is not null;
    }

    /// <summary>
    /// Forwards a write to the owner (a create-only one as such: the owner decides). Forwarded is null when this cachelet
    /// must commit it itself: it owns the key, or (OwnerGone) the owner provably never saw the write.
    /// </summary>
    private async Task<(WriteReceipt? Forwarded, bool OwnerGone)> ForwardWriteAsync(string key, SharedMemoryMap map, bool createOnly, CancellationToken cancellationToken)
    {
        string owner = _core.Owners.GetOwner(key);
        if (owner == _core.Owners.SelfId)
        {
            return (null, false);
        }

        PeerWriteResult result;
        try
        {
            await using Stream content = map.OpenRead();
            result = await _core.Peers!.PutAsync(owner, key, content, map.ContentLength, createOnly, cancellationToken).ConfigureAwait(false);
        }
        catch (BlobAlreadyExistsException)
        {
            // The owner refused the create-only write: nothing was written anywhere.
            _core.Shm.Delete(map);
            throw;
        }
        catch (PeerUnavailableException e) when (!e.MayHaveArrived)
        {
            // The owner is gone and never saw the write: the caller commits it here with synchronous persistence, so it
            // is safe in storage.
            _core.OwnerUnreachable(owner, key, e);
            return (null, true);
        }
        catch (PeerUnavailableException e)
        {
            // The owner failed after the write reached it: it may be in storage already, and writing it again here could
            // land it a second time after a newer write. Its outcome is unknown, as for any write whose answer was lost.
            _core.OwnerUnreachable(owner, key, e);
            throw new WriteOutcomeUnknownException(
                $"The write of {key} reached its owner {owner}, which failed before it answered ({e.Message}): the write may or may not be in storage, and it is not written a second time here. Read the blob to see which, or write it again.",
                e) { Key = key };
        }

        // Keep a local (not owned) copy: the writer reads its own write without a remote hit. The owner copied the
        // bytes it received into its own map.
        bool cached = TryInsertWritten(key, result.Version, map, dirty: false, AccessKind.Write);
        if (!cached)
        {
            _core.Shm.Delete(map);
        }

        return (new WriteReceipt(key, result.Version, cached, result.Persisted, _core.Options.EffectivePersist) { BytesCopied = map.ContentLength }, false);
    }

    /// <summary>
    /// Whether a create-only write of <paramref name="key"/> must be refused, decided here (called under the key's write
    /// lock, on the instance that decides): a copy storage may not have yet (an asynchronous write not yet persisted, or
    /// any copy when nothing is persisted), or a blob in storage.
    /// </summary>
    private async Task<bool> ExistsForCreateAsync(string key, PersistMode mode, CancellationToken cancellationToken)
    {
        lock (_core.Gate)
        {
            if (_core.Entries.TryGetValue(key, out CacheEntry? entry) && (entry.Dirty || mode == PersistMode.None))
            {
                return true;
            }
        }

        return await _core.Storage.GetVersionAsync(key, cancellationToken).ConfigureAwait(false) is not null;
    }

    private static BlobAlreadyExistsException AlreadyExists(string key) => new($"The create-only write of {key} was not made: the blob already exists.") { Key = key };

    /// <summary>Uploads a map, only if the blob does not exist when <paramref name="createOnly"/> (storage decides).</summary>
    private async Task<string> UploadAsync(string key, SharedMemoryMap map, bool createOnly, CancellationToken cancellationToken)
    {
        if (!createOnly)
        {
            return await UploadAsync(key, map, cancellationToken).ConfigureAwait(false);
        }

        await using Stream content = map.OpenRead();
        string etag = await _core.Storage.UploadIfAbsentAsync(key, content, cancellationToken).ConfigureAwait(false) ?? throw AlreadyExists(key);
        _core.Metrics.Uploaded(map.ContentLength);
        return etag;
    }

    /// <summary>Uploads a map; <paramref name="writeId"/> tags an asynchronous write with the version it was announced under.</summary>
    private async Task<string> UploadAsync(string key, SharedMemoryMap map, CancellationToken cancellationToken, string? writeId = null)
    {
        await using Stream content = map.OpenRead();
        string etag = await _core.Storage.UploadAsync(key, content, writeId, cancellationToken).ConfigureAwait(false);
        _core.Metrics.Uploaded(map.ContentLength);
        return etag;
    }

    /// <summary>
    /// A queued write is in storage (<paramref name="etag"/>) or was given up on (null): the entry may be evicted again.
    /// It keeps the version the other members compare against (the pending one): switching it to storage's ETag would
    /// make every other copy look stale and move the whole object again.
    /// </summary>
    private void WriteBackEnded(CacheEntry entry, string? etag)
    {
        lock (_core.Gate)
        {
            entry.Dirty = false;
        }

        if (etag is not null)
        {
            _core.Facade.OnPersisted(new BlobWrittenEventArgs(entry.Key, etag));
        }

        _core.Release(entry);
    }
}
