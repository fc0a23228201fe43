namespace FaaSCache.Caching;

/// <summary>
/// A reference-counted handle on an object in shared memory: what <c>RpcSharedMemory</c> needs
/// (map name, offset 0, length) and a zero-copy view for in-process readers. While a lease is
/// open the object is never evicted; dispose it when the invocation is done.
/// </summary>
public sealed class ObjectLease : IDisposable
{
    private readonly Cachelet _owner;
    private readonly CacheEntry? _entry;
    private readonly SharedMemoryMap _map;
    private int _disposed;

    internal ObjectLease(Cachelet owner, CacheEntry? entry, SharedMemoryMap map, string key, string version, ReadSource source, long bytesCopied)
    {
        BytesCopied = bytesCopied;
        _owner = owner;
        _entry = entry;
        _map = map;
        Key = key;
        Version = version;
        Source = source;
    }

    /// <summary>Gets the key.</summary>
    public string Key { get; }

    /// <summary>Gets the version (ETag) of the content.</summary>
    public string Version { get; }

    /// <summary>Gets how the read was served.</summary>
    public ReadSource Source { get; }

    /// <summary>
    /// Gets the bytes this read wrote into shared memory, measured where the copy happened: 0 for a local hit (the
    /// reader maps the cache's own copy), the object's length when it was received from storage or a peer.
    /// </summary>
    public long BytesCopied { get; }

    /// <summary>Gets a value indicating whether the cache keeps the object (false for oversize or doNotCache objects, served from a private map).</summary>
    public bool IsCached => _entry is not null;

    /// <summary>Gets a value indicating whether a worker can map the content (false when no shared-memory directory had room: pass the bytes).</summary>
    public bool InSharedMemory => _map.IsShared;

    /// <summary>Gets the map name for <c>RpcSharedMemory.name</c>.</summary>
    public string MapName => _map.Name;

    /// <summary>Gets the map's file path.</summary>
    public string MapPath => _map.FilePath;

    /// <summary>Gets the content offset for <c>RpcSharedMemory.offset</c> (always 0: the header is implied).</summary>
    public long Offset => 0;

    /// <summary>Gets the content length for <c>RpcSharedMemory.count</c>.</summary>
    public long Count => _map.ContentLength;

    /// <summary>Gets the content without copying (below 2 GiB).</summary>
    public ReadOnlySpan<byte> Span
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            return _map.Content;
        }
    }

    /// <summary>Gets the content as memory without copying (valid until the lease is disposed).</summary>
    public ReadOnlyMemory<byte> Memory
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            return _map.Memory;
        }
    }

    /// <summary>Opens a read-only stream over the content without copying.</summary>
    public Stream OpenRead()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return _map.OpenRead();
    }

    /// <inheritdoc />
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_entry is not null)
        {
            _owner.Release(_entry);
        }
        else
        {
            _owner.DeleteTransient(_map);
        }
    }
}
