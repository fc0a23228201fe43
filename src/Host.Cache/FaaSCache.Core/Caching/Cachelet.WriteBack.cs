namespace FaaSCache.Caching;

/// <summary>Asynchronous persistence, kept by <see cref="WriteBackQueue"/>: here only what an ended write does to its entry.</summary>
public sealed partial class Cachelet
{
    private readonly WriteBackQueue _writeBack;

    /// <summary>Gets or sets how long disposal waits for pending writes before giving up on them (they are logged as lost).</summary>
    public TimeSpan ShutdownFlushTimeout
    {
        get => _writeBack.ShutdownFlushTimeout;
        set => _writeBack.ShutdownFlushTimeout = value;
    }

    /// <summary>Gets the asynchronous writes not yet in storage.</summary>
    public long PendingWrites => _writeBack.Pending;

    /// <summary>Gets the keys whose asynchronous write was abandoned at shutdown.</summary>
    public IReadOnlyList<string> LostWrites => _writeBack.Lost;

    private WriteBackQueue StartWriteBack() => new(
        // Tagged with the version the write was announced under (cache triggers, other members): a poll that lists the
        // blob later knows it for the same write.
        (entry, token) => UploadAsync(entry.Key, entry.Map, token, writeId: entry.Version),
        WriteBackEnded,
        _logger);

    /// <summary>
    /// A queued write is in storage (<paramref name="etag"/>) or was given up on (null): the entry may be evicted again.
    /// It keeps the version the other members compare against (the pending one): switching it to storage's ETag would
    /// make every other copy look stale and move the whole object again.
    /// </summary>
    private void WriteBackEnded(CacheEntry entry, string? etag)
    {
        lock (_gate)
        {
            entry.Dirty = false;
        }

        if (etag is not null)
        {
            Persisted?.Invoke(this, new BlobWrittenEventArgs(entry.Key, etag));
        }

        Release(entry);
    }
}
