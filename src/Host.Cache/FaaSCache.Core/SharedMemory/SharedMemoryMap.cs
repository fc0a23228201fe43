using System.Buffers;
using System.Buffers.Binary;
using System.IO.MemoryMappedFiles;

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

    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly Microsoft.Win32.SafeHandles.SafeFileHandle _handle;
    private readonly byte* _base;
    private int _disposed;

    private SharedMemoryMap(string name, string path, FileStream stream, MemoryMappedFile file, long contentLength, bool writable)
    {
        Name = name;
        FilePath = path;
        ContentLength = contentLength;
        _handle = stream.SafeFileHandle;
        _file = file;
        _view = file.CreateViewAccessor(0, HeaderSize + contentLength, writable ? MemoryMappedFileAccess.ReadWrite : MemoryMappedFileAccess.Read);
        byte* p = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        _base = p + _view.PointerOffset;
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
            fs.SetLength(HeaderSize + contentLength);
            if (reserve && PosixFallocate(fs.SafeFileHandle, 0, HeaderSize + contentLength) == NoSpace)
            {
                fs.Dispose();
                TryDeleteFile(path);
                return null;
            }

            var mmf = MemoryMappedFile.CreateFromFile(fs, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            var map = new SharedMemoryMap(name, path, fs, mmf, contentLength, writable: true);
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
            var mmf = MemoryMappedFile.CreateFromFile(fs, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            return new SharedMemoryMap(name, path, fs, mmf, contentLength, writable: true);
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

    [System.Runtime.InteropServices.LibraryImport("libc", EntryPoint = "posix_fallocate")]
    private static partial int PosixFallocate(Microsoft.Win32.SafeHandles.SafeFileHandle fd, long offset, long length);

    [System.Runtime.InteropServices.LibraryImport("libc", EntryPoint = "madvise", SetLastError = true)]
    private static partial int Madvise(nint address, nuint length, int advice);

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

        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _file.Dispose();
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
