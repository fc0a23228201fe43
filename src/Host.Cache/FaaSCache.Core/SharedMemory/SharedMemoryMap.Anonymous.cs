namespace FaaSCache.SharedMemory;

/// <summary>
/// Maps made from an anonymous file (O_TMPFILE): the file is opened ahead of time with no name, so a later create only
/// sizes, maps and writes its header, then links it under its journaled name. Until it is linked no directory lists it
/// and a crash frees it with the process; once linked, a worker can only ever see a complete, initialized map.
/// </summary>
public sealed partial class SharedMemoryMap
{
    private const int ReadWrite = 2; // O_RDWR
    private const int CloseOnExec = 0x80000; // O_CLOEXEC
    private const int OwnerReadWrite = 0x180; // 0600
    private const int AtCurrentDirectory = -100; // AT_FDCWD
    private const int AtSymlinkFollow = 0x400; // AT_SYMLINK_FOLLOW: link the file /proc/self/fd/N stands for

    /// <summary>
    /// Opens an unnamed file of mode 0600 in <paramref name="directory"/>'s file system; null with the errno where that
    /// cannot be done (no O_TMPFILE on this platform or file system, too many open files).
    /// </summary>
    internal static SafeFileHandle? TryOpenAnonymous(string directory, out int errno)
    {
        int temporaryFile = RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => 0x410000, // __O_TMPFILE | O_DIRECTORY
            Architecture.Arm64 => 0x404000,
            _ => 0,
        };
        errno = 95; // EOPNOTSUPP
        if (!OperatingSystem.IsLinux() || temporaryFile == 0)
        {
            return null;
        }

        int fd = OpenFile(directory, temporaryFile | ReadWrite | CloseOnExec, OwnerReadWrite);
        if (fd < 0)
        {
            errno = Marshal.GetLastPInvokeError();
            return null;
        }

        errno = 0;
        var handle = new SafeFileHandle(fd, ownsHandle: true);
        try
        {
            _ = RandomAccess.GetLength(handle); // settles the handle's one-time seekability probe (lseek) here, off the hot path
            return handle;
        }
        catch (IOException)
        {
            handle.Dispose();
            return null;
        }
    }

    /// <summary>
    /// Makes a map of <paramref name="contentLength"/> bytes from an anonymous file and links it as
    /// <paramref name="directory"/>/<paramref name="name"/>. Its space is allocated first (posix_fallocate), so a full
    /// file system gives null (the file is left as it was, empty and unnamed) rather than SIGBUS later; on success the
    /// map owns <paramref name="file"/>, on an exception <paramref name="file"/> is closed and nothing was linked.
    /// </summary>
    internal static SharedMemoryMap? TryCreateFromAnonymous(SafeFileHandle file, string directory, string name, long contentLength)
    {
        long length = HeaderSize + contentLength;
        int error = PosixFallocate(file, 0, length); // also sets the file's size: no ftruncate
        if (error == NoSpace)
        {
            return null;
        }

        if (error != 0)
        {
            file.Dispose();
            throw new SharedMemoryException($"Could not allocate {length} bytes for shared-memory map '{name}' in '{directory}' (errno {error}).");
        }

        string path = Path.Combine(directory, name);
        SharedMemoryMap map;
        try
        {
            map = new SharedMemoryMap(name, path, file, file, contentLength, writable: true);
        }
        catch
        {
            file.Dispose();
            throw;
        }

        try
        {
            map.WriteHeader();
            Link(file, path, name);
            return map;
        }
        catch
        {
            map.Dispose();
            throw;
        }
    }

    /// <summary>Gives the anonymous file its name; fails (EEXIST) rather than replace a file of that name.</summary>
    private static void Link(SafeFileHandle file, string path, string name)
    {
        bool added = false;
        try
        {
            file.DangerousAddRef(ref added);
            string self = string.Create(CultureInfo.InvariantCulture, $"/proc/self/fd/{file.DangerousGetHandle()}");
            if (LinkAt(AtCurrentDirectory, self, AtCurrentDirectory, path, AtSymlinkFollow) != 0)
            {
                int errno = Marshal.GetLastPInvokeError();
                throw new SharedMemoryException($"Could not link shared-memory map '{name}' at '{path}' (errno {errno}).");
            }
        }
        finally
        {
            if (added)
            {
                file.DangerousRelease();
            }
        }
    }

    // open(2) is variadic; on x64 and arm64 Linux the mode travels in the same register either way.
    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int OpenFile(string path, int flags, int mode);

    [LibraryImport("libc", EntryPoint = "linkat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int LinkAt(int oldDirectory, string oldPath, int newDirectory, string newPath, int flags);
}
