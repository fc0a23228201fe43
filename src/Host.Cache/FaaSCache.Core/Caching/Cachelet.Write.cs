using FaaSCache.Ownership;
using FaaSCache.Options;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;

namespace FaaSCache.Caching;

/// <summary>§3.2 writes through the owner (this cachelet with one instance), persisted per the preset (Table 3).</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Raised after a write through this cachelet took effect (the cache triggers of §3: functions
    /// triggered by a blob fire at once instead of waiting for storage polling). Handlers must not block.
    /// </summary>
    public event EventHandler<BlobWrittenEventArgs>? Written;

    /// <summary>Raised when storage got a write: at once for sync persistence, after the background write for async.</summary>
    public event EventHandler<BlobWrittenEventArgs>? Persisted;

    private readonly KeyedAsyncLock _keyWrites = new();
    private long _writeSequence;

    /// <summary>Gets the count of writes that changed this cachelet's index (a read started before one must not cache over it).</summary>
    private long WriteSequence
    {
        get
        {
            lock (_gate)
            {
                return _writeSequence;
            }
        }
    }

    /// <summary>Writes <paramref name="data"/> to <paramref name="key"/>.</summary>
    public async Task<WriteReceipt> WriteAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        return await CommitAsync(key, MapOf(data), forward: true, copiedIn: data.Length, createOnly: false, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Writes <paramref name="data"/> to <paramref name="key"/> only if no blob of that name exists (Put Blob with
    /// <c>If-None-Match: *</c>), atomically across the app's instances: under an owner preset the key's owner decides
    /// (storage's conditional upload when it persists synchronously; its own copy, pending writes and storage, under its
    /// per-key write lock, when it persists later); under a local preset storage decides (the write is persisted at once,
    /// conditionally, even under <c>localAsync</c>; with <c>persist: none</c> nothing reaches storage, so the writer
    /// decides for itself only). Throws <see cref="BlobAlreadyExistsException"/>, nothing written, when the blob exists;
    /// otherwise the write is an ordinary one (one cache trigger, on the instance that committed it).
    /// </summary>
    public async Task<WriteReceipt> CreateAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        return await CommitAsync(key, MapOf(data), forward: true, copiedIn: data.Length, createOnly: true, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A new map holding <paramref name="data"/>, written through its file (pwrite, as a fill from storage is): a copy
    /// through this process's fresh mapping would fault on every 4 KiB page (~13 µs each on this project's VMs).
    /// </summary>
    private SharedMemoryMap MapOf(ReadOnlyMemory<byte> data)
    {
        SharedMemoryMap map = _shm.Create(data.Length);
        try
        {
            map.Write(data.Span, 0);
            return map;
        }
        catch
        {
            _shm.Delete(map);
            throw;
        }
    }

    /// <summary>Writes the rest of <paramref name="data"/> to <paramref name="key"/>, streaming into shared memory.</summary>
    public async Task<WriteReceipt> WriteAsync(string key, Stream data, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        if (!data.CanSeek)
        {
            // The map's size is fixed at creation, so an unsized stream is gathered first.
            var buffered = new MemoryStream();
            await data.CopyToAsync(buffered, cancellationToken).ConfigureAwait(false);
            return await WriteAsync(key, buffered.GetBuffer().AsMemory(0, (int)buffered.Length), cancellationToken).ConfigureAwait(false);
        }

        SharedMemoryMap map = _shm.Create(data.Length - data.Position);
        long copied;
        try
        {
            copied = await StreamCopy.FillAsync(data, map, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _shm.Delete(map);
            throw;
        }

        return await CommitAsync(key, map, forward: true, copied, createOnly: false, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Writes the content of a map another process created (a worker's output) without copying it: the cache adopts the file.</summary>
    public async Task<WriteReceipt> WriteMapAsync(string key, string mapName, long? count = null, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        SharedMemoryMap map = _shm.AdoptHandedOver(mapName, count);
        return await CommitAsync(key, map, forward: true, copiedIn: 0, createOnly: false, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits until every asynchronous write made so far is in storage.</summary>
    public Task FlushAsync(CancellationToken cancellationToken = default) => _writeBack.FlushAsync(cancellationToken);

    /// <summary>
    /// Takes ownership of <paramref name="map"/> (not yet in the index) and applies the preset and the persistence mode.
    /// <paramref name="forward"/> is false when committing a peer's write as the key's owner; <paramref name="copiedIn"/>
    /// is what filling the map cost (0 when a worker's map was adopted as it was); <paramref name="createOnly"/> writes
    /// only if the blob does not exist (<see cref="CreateAsync"/>).
    /// </summary>
    private async Task<WriteReceipt> CommitAsync(string key, SharedMemoryMap map, bool forward, long copiedIn, bool createOnly, CancellationToken cancellationToken)
    {
        if (forward)
        {
            Metrics.Write();
        }
        else
        {
            Metrics.PeerWrite();
        }

        try
        {
            await WaitForLeaseAsync(key, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _shm.Delete(map);
            throw;
        }

        PersistMode persist = _options.EffectivePersist;
        if (forward && _peers is not null && WritesToOwner && !_doNotCache.IsMatch(key))
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
        await InvalidateOthersAsync(receipt.Key, receipt.Version).ConfigureAwait(false);
        var args = new BlobWrittenEventArgs(receipt.Key, receipt.Version, receipt.Persisted || receipt.Persist != PersistMode.None);
        if (receipt.Persisted)
        {
            Persisted?.Invoke(this, args);
        }

        Written?.Invoke(this, args);
        return receipt;
    }

    private async Task<WriteReceipt> CommitCoreAsync(string key, SharedMemoryMap map, AccessKind access, PersistMode mode, bool createOnly, CancellationToken cancellationToken)
    {
        if (_doNotCache.IsMatch(key))
        {
            try
            {
                return new WriteReceipt(key, await UploadAsync(key, map, createOnly, cancellationToken).ConfigureAwait(false), false, true, PersistMode.Sync);
            }
            finally
            {
                _shm.Delete(map);
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
                    _shm.Delete(map);
                    throw;
                }

                cached = TryInsertWritten(key, etag, map, dirty: false, access);
            }

            if (!cached)
            {
                _shm.Delete(map);
            }

            return new WriteReceipt(key, etag, cached, true, mode);
        }

        string version = NextLocalVersion(mode == PersistMode.Async ? "pending" : "local");
        // Held from the create-only check to the insert, and by every write of the key, so that no write lands in between.
        IDisposable held;
        try
        {
            held = await _keyWrites.LockAsync(key, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            _shm.Delete(map);
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
                _shm.Delete(map);
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
                    _shm.Delete(map);
                }
            }
        }

        _shm.Delete(map);
        throw new CacheCapacityException(
            $"Cannot keep '{key}' ({map.ContentLength} bytes): the cache ({CapacityBytes} bytes, {BytesCached} in use or pinned) has no room for it and persist is 'none', so the write would be lost.");
    }

    private bool TryInsertWritten(string key, string version, SharedMemoryMap map, bool dirty, AccessKind access)
    {
        var dead = new List<CacheEntry>();
        bool owned = _owners.IsLocalOwner(key);
        CacheEntry? entry = null;
        lock (_gate)
        {
            RecordAccessLocked(key, access);
            if (map.IsShared && TryReserveLocked(map.ContentLength, dead))
            {
                // A pending write-back holds a reference, so the object stays until storage has it.
                entry = new CacheEntry(key, version, map, owned, IsLarge(map.ContentLength)) { Dirty = dirty, RefCount = dirty ? 1 : 0, WriteSequence = ++_writeSequence };
                InsertLocked(entry, dead);
            }
            else if (_entries.TryGetValue(key, out CacheEntry? stale) && !stale.Dirty)
            {
                ++_writeSequence;
                // The new version is not cached: an older cached one must not be served either.
                DetachLocked(stale, dead);
            }
        }

        DeleteMaps(dead);
        if (entry is { Dirty: true })
        {
            _writeBack.Enqueue(entry);
        }

        return entry is not null;
    }

    /// <summary>
    /// True when this cachelet decides a create-only write for every instance: it is the key's owner (writes go to the
    /// owner, and reach here only on the owner or when the owner is gone, then persisted synchronously), or it is alone.
    /// </summary>
    private bool DecidesCreates => _peers is null || WritesToOwner;

    /// <summary>
    /// Whether a create-only write of <paramref name="key"/> must be refused, decided here (called under the key's write
    /// lock, on the instance that decides): a copy storage may not have yet (an asynchronous write not yet persisted, or
    /// any copy when nothing is persisted), or a blob in storage.
    /// </summary>
    private async Task<bool> ExistsForCreateAsync(string key, PersistMode mode, CancellationToken cancellationToken)
    {
        lock (_gate)
        {
            if (_entries.TryGetValue(key, out CacheEntry? entry) && (entry.Dirty || mode == PersistMode.None))
            {
                return true;
            }
        }

        return await _storage.GetVersionAsync(key, cancellationToken).ConfigureAwait(false) is not null;
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
        string etag = await _storage.UploadIfAbsentAsync(key, content, cancellationToken).ConfigureAwait(false) ?? throw AlreadyExists(key);
        Metrics.Uploaded(map.ContentLength);
        return etag;
    }

    /// <summary>Uploads a map; <paramref name="writeId"/> tags an asynchronous write with the version it was announced under.</summary>
    private async Task<string> UploadAsync(string key, SharedMemoryMap map, CancellationToken cancellationToken, string? writeId = null)
    {
        await using Stream content = map.OpenRead();
        string etag = await _storage.UploadAsync(key, content, writeId, cancellationToken).ConfigureAwait(false);
        Metrics.Uploaded(map.ContentLength);
        return etag;
    }
}
