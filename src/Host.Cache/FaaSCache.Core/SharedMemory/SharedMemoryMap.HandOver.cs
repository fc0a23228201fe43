namespace FaaSCache.SharedMemory;

/// <summary>
/// Maps another process wrote and hands over (a worker's output): the host maps one only once no other process holds
/// it open, because a writer that kept a descriptor could shrink the file under the host's mapping (SIGBUS kills the
/// host); a region that is only copied is read with pread, which sees a shrink as a short read, never a fault.
/// </summary>
public sealed partial class SharedMemoryMap
{
    private const int FcntlSetSignal = 10; // F_SETSIG
    private const int FcntlSetLease = 1024; // F_SETLEASE
    private const int WriteLease = 1; // F_WRLCK
    private const int NoLease = 2; // F_UNLCK
    private const int UrgentSignal = 23; // SIGURG: ignored by default, so a lease break cannot terminate the host
    private const int TryAgain = 11; // EAGAIN
    private const int Busy = 16; // EBUSY

    /// <summary>
    /// Opens a map handed over by another process after proving (a write lease, F_SETLEASE) that no other process has
    /// the file open, then validates its header. A file that passed the proof but is malformed is deleted: it was handed
    /// over and nobody else holds it. Returns the map and whether the proof could be made (false: this file system or
    /// kernel refuses leases, and the map is adopted unproven).
    /// </summary>
    internal static (SharedMemoryMap Map, bool Proven) OpenHandedOver(string directory, string name)
    {
        string path = Path.Combine(directory, name);
        FileStream fs = OpenExisting(path, name, directory, FileAccess.ReadWrite);
        bool proven;
        try
        {
            proven = ProveNoOtherHolder(fs.SafeFileHandle, name);
        }
        catch
        {
            fs.Dispose();
            throw;
        }

        try
        {
            return (FromOpenFile(fs, name, path), proven);
        }
        catch (SharedMemoryException e) when (proven)
        {
            TryDeleteFile(path);
            throw new SharedMemoryException($"{e.Message} It was deleted (handed over, held by no other process).", e);
        }
    }

    /// <summary>True when the file at <paramref name="path"/> is open in no other process (a write lease is granted).</summary>
    internal static bool HeldByNobody(string path, string name)
    {
        try
        {
            using var fs = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
            return ProveNoOtherHolder(fs.SafeFileHandle, name);
        }
        catch (Exception e) when (e is SharedMemoryException or IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>
    /// Validates the header of an open map file and returns its content length; the header is read with pread and the
    /// length checked against the file's size, so no mapping is involved.
    /// </summary>
    internal static long ReadContentLength(SafeFileHandle handle, string name)
    {
        long fileLength = RandomAccess.GetLength(handle);
        if (fileLength < HeaderSize)
        {
            throw new SharedMemoryException($"Shared-memory map '{name}' is {fileLength} bytes long, shorter than its {HeaderSize}-byte header.");
        }

        Span<byte> header = stackalloc byte[HeaderSize];
        if (RandomAccess.Read(handle, header, 0) != HeaderSize)
        {
            throw new SharedMemoryException($"Shared-memory map '{name}' shrank below its {HeaderSize}-byte header while it was read.");
        }

        long contentLength = BinaryPrimitives.ReadInt64LittleEndian(header[1..]);
        if (header[0] != 1)
        {
            throw new SharedMemoryException($"Shared-memory map '{name}' is not initialized (byte 0 is 0x{header[0]:x2}, expected 0x01).");
        }

        if (contentLength < 0 || contentLength > fileLength - HeaderSize)
        {
            throw new SharedMemoryException($"Shared-memory map '{name}' declares {contentLength} content bytes but the file holds {fileLength - HeaderSize}.");
        }

        return contentLength;
    }

    /// <summary>Opens an existing map file, naming the map when it is missing.</summary>
    internal static FileStream OpenExisting(string path, string name, string directory, FileAccess access)
    {
        try
        {
            return new FileStream(path, FileMode.Open, access, FileShare.ReadWrite);
        }
        catch (FileNotFoundException)
        {
            throw new SharedMemoryException($"Shared-memory map '{name}' does not exist in '{directory}'.");
        }
    }

    /// <summary>
    /// True when no other process has the file open (a write lease is granted only then), false when leases are not
    /// available here; throws when another process holds it (a writer could still resize it).
    /// </summary>
    private static bool ProveNoOtherHolder(SafeFileHandle handle, string name)
    {
        // The lease is held for two system calls; should someone open the file meanwhile, the break signal is SIGURG.
        _ = Fcntl(handle, FcntlSetSignal, UrgentSignal);
        if (Fcntl(handle, FcntlSetLease, WriteLease) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            if (errno is TryAgain or Busy)
            {
                throw new SharedMemoryMapInUseException(
                    $"Shared-memory map '{name}' is open in another process, so it cannot be taken over while it is: the worker that wrote it " +
                    "must close it first (it is asked to, with CloseSharedMemoryResourcesRequest), and a map of the cache or of another app is never handed over.");
            }

            return false;
        }

        _ = Fcntl(handle, FcntlSetLease, NoLease);
        return true;
    }

    [LibraryImport("libc", EntryPoint = "fcntl", SetLastError = true)]
    private static partial int Fcntl(SafeFileHandle fd, int command, int argument);
}
