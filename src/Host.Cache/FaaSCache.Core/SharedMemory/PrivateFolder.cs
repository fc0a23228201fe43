namespace FaaSCache.SharedMemory;

/// <summary>
/// The store's folders (map, journal, recycle, spill) must be its own: another local user who made one first could list
/// any file in a journal for the store to delete, or swap in a symlink (issue 31, row 7). .NET cannot tell a file's owner,
/// so libc's statx and geteuid do.
/// </summary>
internal static partial class PrivateFolder
{
    /// <summary>The mode a folder is created with: the owner's only (language workers run as the same user).</summary>
    internal const UnixFileMode CreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;

    private const int AtCurrentDirectory = -100; // AT_FDCWD
    private const int AtSymlinkNoFollow = 0x100; // AT_SYMLINK_NOFOLLOW
    private const uint BasicStats = 0x7ff; // STATX_BASIC_STATS
    private const int NoSuchFile = 2; // ENOENT
    private const int NotADirectory = 20; // ENOTDIR: a component of the path is a file
    private const int PermissionDenied = 13; // EACCES
    private const int TypeMask = 0xF000; // S_IFMT
    private const int DirectoryType = 0x4000; // S_IFDIR
    private const int SymlinkType = 0xA000; // S_IFLNK
    private const int GroupOrOtherWrite = 0x12; // S_IWGRP | S_IWOTH

    /// <summary>Gets this process's effective uid, the owner its folders must have.</summary>
    internal static uint EffectiveUserId => GetEffectiveUserId();

    /// <summary>
    /// Creates <paramref name="folder"/> with mode 0700 when it is absent, then checks it as <see cref="CheckIfPresent"/>
    /// does. mkdir's own failures (a missing or read-only parent) are thrown as they are (<see cref="IOException"/>,
    /// <see cref="UnauthorizedAccessException"/>).
    /// </summary>
    public static void Ensure(string folder)
    {
        if (Stat(folder) is null)
        {
            try
            {
                Directory.CreateDirectory(folder, CreateMode);
            }
            catch (IOException) when (Stat(folder) is not null)
            {
                // Something appeared there meanwhile (a file, a dangling symlink): checked below.
            }
        }

        CheckIfPresent(folder);
    }

    /// <summary>
    /// Throws <see cref="SharedMemoryException"/> naming <paramref name="folder"/>, its owner and mode when it exists but is
    /// not a real directory (a symlink, a file), is owned by another uid than this process's effective one, or is writable
    /// by group or others. An absent folder passes.
    /// </summary>
    public static void CheckIfPresent(string folder)
    {
        if (Stat(folder) is not { } stat)
        {
            return;
        }

        uint self = GetEffectiveUserId();
        if (Problem(stat.Uid, stat.Mode, self) is { } problem)
        {
            string mode = Convert.ToString(stat.Mode & 0xFFF, 8).PadLeft(4, '0');
            throw new SharedMemoryException(
                $"Shared-memory folder '{folder}' {problem} (owner uid {stat.Uid}, mode {mode}): it must be a real directory owned by uid {self} " +
                $"(this process) and not writable by group or others, or another local user could choose which files the host deletes. " +
                $"Remove it (rm -r '{folder}') or fix it (chown {self} '{folder}' && chmod 700 '{folder}'), then start the host again.");
        }
    }

    /// <summary>What is wrong with a folder of owner <paramref name="uid"/> and <paramref name="mode"/> (stx_mode) for <paramref name="self"/>, or null.</summary>
    internal static string? Problem(uint uid, int mode, uint self)
    {
        var problems = new List<string>();
        if ((mode & TypeMask) == SymlinkType)
        {
            problems.Add("is a symbolic link");
        }
        else if ((mode & TypeMask) != DirectoryType)
        {
            problems.Add("is not a directory");
        }

        if (uid != self)
        {
            problems.Add($"is owned by uid {uid}, not {self}");
        }

        if ((mode & GroupOrOtherWrite) != 0)
        {
            problems.Add("is writable by group or others");
        }

        return problems.Count == 0 ? null : string.Join(", ", problems);
    }

    /// <summary>The owner and mode of <paramref name="path"/> itself (a symlink is not followed), or null when it does not exist.</summary>
    private static unsafe (uint Uid, int Mode)? Stat(string path)
    {
        // struct statx is 256 bytes on every architecture: stx_uid is a u32 at offset 20, stx_mode a u16 at offset 28.
        byte* buffer = stackalloc byte[256];
        if (Statx(AtCurrentDirectory, path, AtSymlinkNoFollow, BasicStats, buffer) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            if (errno is NoSuchFile or NotADirectory)
            {
                return null;
            }

            // As mkdir's failures are: a root this process cannot search is one it cannot use.
            string message = string.Create(CultureInfo.InvariantCulture, $"Cannot read the owner and mode of shared-memory folder '{path}' (statx errno {errno}).");
            throw errno == PermissionDenied ? new UnauthorizedAccessException(message) : new IOException(message);
        }

        return (*(uint*)(buffer + 20), *(ushort*)(buffer + 28));
    }

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int Statx(int directory, string path, int flags, uint mask, byte* buffer);

    [LibraryImport("libc", EntryPoint = "geteuid")]
    private static partial uint GetEffectiveUserId();
}
