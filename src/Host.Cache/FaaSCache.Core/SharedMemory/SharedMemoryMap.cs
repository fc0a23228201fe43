namespace FaaSCache.SharedMemory;

/// <summary>
/// One memory-mapped file in the real Functions host's layout: byte 0 = 0x01 (initialized),
/// bytes 1..8 = content length (little-endian int64), content from byte 9.
/// Disposing unmaps it; deleting the file is the <see cref="SharedMemoryStore"/>'s job.
/// </summary>
public sealed unsafe partial class SharedMemoryMap : IDisposable
{
    /// <summary>Bytes before the content.</summary>
    public const int HeaderSize = 9;

    private const int ProtectRead = 1; // PROT_READ
    private const int ProtectWrite = 2; // PROT_WRITE
    private const int MapSharedFlag = 1; // MAP_SHARED

    private readonly SafeFileHandle _handle;
    private readonly IDisposable _owner;
    private readonly byte* _base;
    private readonly nuint _mappedLength;
    private int _disposed;

    /// <summary>
    /// Maps the header and content with one mmap (no MemoryMappedFile: it adds lseek, fstat, madvise and, on dispose,
    /// msync, which a tmpfs map does not need); the map owns <paramref name="owner"/> (the open file) from here on.
    /// </summary>
    private SharedMemoryMap(string name, string path, SafeFileHandle handle, IDisposable owner, long contentLength, bool writable)
    {
        Name = name;
        FilePath = path;
        ContentLength = contentLength;
        _handle = handle;
        _owner = owner;
        _mappedLength = (nuint)(HeaderSize + contentLength);
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            nint p = Mmap(0, _mappedLength, writable ? ProtectRead | ProtectWrite : ProtectRead, MapSharedFlag, (int)handle.DangerousGetHandle(), 0);
            if (p == -1)
            {
                throw new SharedMemoryException($"Could not map shared-memory map '{name}' ({_mappedLength} bytes): errno {Marshal.GetLastPInvokeError()}.");
            }

            _base = (byte*)p;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>Gets the map name (the file name under <c>AzureFunctions/</c>), what <c>RpcSharedMemory.name</c> carries.</summary>
    public string Name { get; }

    /// <summary>Gets the full path of the backing file.</summary>
    public string FilePath { get; }

    /// <summary>Gets a value indicating whether the map is in a shared-memory directory (false in the spill folder: workers cannot map it).</summary>
    public bool IsShared { get; internal set; } = true;

    /// <summary>Gets the content length in bytes (without the header).</summary>
    public long ContentLength { get; }

    /// <summary>Gets the content as a span; only for content below 2 GiB.</summary>
    public Span<byte> Content
    {
        get
        {
            ObjectDisposedException.ThrowIf(_disposed != 0, this);
            if (ContentLength > int.MaxValue)
            {
                throw new InvalidOperationException($"Map '{Name}' holds {ContentLength} bytes, more than a span can address; use OpenRead().");
            }

            return new Span<byte>(_base + HeaderSize, (int)ContentLength);
        }
    }

    /// <summary>Gets the content as memory (zero copy; valid while the map is alive).</summary>
    public Memory<byte> Memory => new MapMemoryManager(this).Memory;

    /// <summary>Opens a read-only stream over the content (zero copy).</summary>
    public Stream OpenRead()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return new UnmanagedMemoryStream(_base + HeaderSize, ContentLength, ContentLength, FileAccess.Read);
    }

    /// <summary>Opens a writable stream over the content.</summary>
    internal Stream OpenWrite()
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return new UnmanagedMemoryStream(_base + HeaderSize, 0, ContentLength, FileAccess.Write);
    }

    /// <summary>
    /// Writes <paramref name="data"/> at <paramref name="contentOffset"/> through the file (pwrite), not the mapping: the
    /// kernel fills the shared pages through its own map, so this process takes no page fault for them (each costs about
    /// 13 µs on this project's VMs); the mapping sees the bytes at once (same page cache).
    /// </summary>
    internal void Write(ReadOnlySpan<byte> data, long contentOffset)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        ArgumentOutOfRangeException.ThrowIfNegative(contentOffset);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(contentOffset + data.Length, ContentLength, nameof(data));
        RandomAccess.Write(_handle, data, HeaderSize + contentOffset);
    }

    /// <summary>Creates a new file of <paramref name="contentLength"/> bytes of content, mode 0600, with its header written.</summary>
    internal static SharedMemoryMap Create(string directory, string name, long contentLength) =>
        TryCreate(directory, name, contentLength, reserve: false)!;

    /// <summary>
    /// Creates a new map; with <paramref name="reserve"/> its space is allocated first (posix_fallocate), so a full
    /// file system gives null here rather than SIGBUS when the pages are written (tmpfs files are sparse).
    /// </summary>
    internal static SharedMemoryMap? TryCreate(string directory, string name, long contentLength, bool reserve)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(contentLength);
        string path = Path.Combine(directory, name);
        var fs = new FileStream(path, new FileStreamOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite,
            UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        });
        try
        {
            RandomAccess.SetLength(fs.SafeFileHandle, HeaderSize + contentLength);
            if (reserve && PosixFallocate(fs.SafeFileHandle, 0, HeaderSize + contentLength) == NoSpace)
            {
                fs.Dispose();
                TryDeleteFile(path);
                return null;
            }

            var map = new SharedMemoryMap(name, path, fs.SafeFileHandle, fs, contentLength, writable: true);
            map.WriteHeader();
            return map;
        }
        catch
        {
            fs.Dispose();
            TryDeleteFile(path);
            throw;
        }
    }

    /// <summary>
    /// A new map over a kept file (<see cref="SharedMemoryStore"/>'s recycling) already at <paramref name="path"/>, at
    /// least as long as the map needs: cut to size (the pages within stay allocated) and its header written.
    /// </summary>
    internal static SharedMemoryMap OverKeptFile(string path, string name, long contentLength)
    {
        var fs = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        try
        {
            RandomAccess.SetLength(fs.SafeFileHandle, HeaderSize + contentLength);
            var map = new SharedMemoryMap(name, path, fs.SafeFileHandle, fs, contentLength, writable: true);
            map.WriteHeader();
            return map;
        }
        catch
        {
            fs.Dispose();
            throw;
        }
    }

    /// <summary>Opens a map another process wrote (a caller's TryPut) and validates its header.</summary>
    internal static SharedMemoryMap Open(string directory, string name)
    {
        string path = Path.Combine(directory, name);
        return FromOpenFile(OpenExisting(path, name, directory, FileAccess.ReadWrite), name, path);
    }

    /// <summary>Validates the header of <paramref name="fs"/> (read with pread) and maps it; disposes it on failure.</summary>
    private static SharedMemoryMap FromOpenFile(FileStream fs, string name, string path)
    {
        try
        {
            long contentLength = ReadContentLength(fs.SafeFileHandle, name);
            File.SetUnixFileMode(fs.SafeFileHandle, UnixFileMode.UserRead | UnixFileMode.UserWrite);
            return new SharedMemoryMap(name, path, fs.SafeFileHandle, fs, contentLength, writable: true);
        }
        catch
        {
            fs.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Starts populating the map's pages on another thread (Linux MADV_POPULATE_WRITE), so a writer that
    /// fills the map from the network finds them ready instead of faulting each one in. Best effort:
    /// the task completes quietly where the kernel lacks it. Await it before disposing the map.
    /// </summary>
    internal Task PrefaultAsync()
    {
        nint start = (nint)_base;
        nuint length = (nuint)(HeaderSize + ContentLength);
        return Task.Run(() => _ = Madvise(start, length, MadvPopulateWrite));
    }

    private const int MadvPopulateWrite = 23;

    private const int NoSpace = 28; // ENOSPC

    [LibraryImport("libc", EntryPoint = "posix_fallocate")]
    private static partial int PosixFallocate(SafeFileHandle fd, long offset, long length);

    [LibraryImport("libc", EntryPoint = "madvise", SetLastError = true)]
    private static partial int Madvise(nint address, nuint length, int advice);

    [LibraryImport("libc", EntryPoint = "mmap", SetLastError = true)]
    private static partial nint Mmap(nint address, nuint length, int protection, int flags, int fd, long offset);

    [LibraryImport("libc", EntryPoint = "munmap")]
    private static partial int Munmap(nint address, nuint length);

    /// <summary>Writes the header through the file, so creating a map faults in none of its pages here.</summary>
    private void WriteHeader()
    {
        Span<byte> header = stackalloc byte[HeaderSize];
        header[0] = 1;
        BinaryPrimitives.WriteInt64LittleEndian(header[1..], ContentLength);
        RandomAccess.Write(_handle, header, 0);
    }

    internal static void TryDeleteFile(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <inheritdoc />
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _ = Munmap((nint)_base, _mappedLength);
        _owner.Dispose();
    }

    private sealed class MapMemoryManager(SharedMemoryMap map) : MemoryManager<byte>
    {
        public override Span<byte> GetSpan() => map.Content;

        public override MemoryHandle Pin(int elementIndex = 0) => new(map._base + HeaderSize + elementIndex);

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing)
        {
        }
    }
}
