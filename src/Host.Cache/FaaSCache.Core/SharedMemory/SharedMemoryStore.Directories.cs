namespace FaaSCache.SharedMemory;

/// <summary>
/// The directories' own limits (a container's /dev/shm is often 64 MB): each map goes to the first directory with room
/// for it (statfs through <see cref="DriveInfo"/>); near a full directory its space is allocated up front, so a full
/// tmpfs fails the create (and the next directory is tried) instead of faulting a writer later; when no directory has
/// room the map goes to a private spill folder on disk, so a read is still served (not shared, never cached). A small map
/// first tries the pool in the first directory (no statfs: its space is always allocated up front, ENOSPC falls through
/// to this path).
/// </summary>
public sealed partial class SharedMemoryStore
{
    /// <summary>Below twice the map's size plus this, a directory counts as nearly full and the map's space is allocated up front.</summary>
    private const long TightSlackBytes = 16L << 20;

    private readonly List<string> _mapDirectories = [];
    private long _spilled;

    /// <summary>Gets the map folders in use, in the order they are filled (the first is <see cref="MapDirectory"/>).</summary>
    public IReadOnlyList<string> MapDirectories => _mapDirectories;

    /// <summary>Gets the configured directories that could not be used, each with why.</summary>
    public IReadOnlyList<string> UnusableDirectories { get; private set; } = [];

    /// <summary>Gets how many maps went to the spill folder because no directory had room.</summary>
    public long SpilledMaps => Interlocked.Read(ref _spilled);

    /// <summary>Gets the private folder for maps that fit in no shared-memory directory.</summary>
    public string SpillDirectory => Path.Combine(SpillParent, InstanceId);

    /// <summary>
    /// Gets the folder of this user's instances' spill folders: in the world-writable temporary folder, so one per user
    /// (another user's would be refused as not ours) and checked as ours.
    /// </summary>
    private static string SpillParent => Path.Combine(Path.GetTempPath(), "faascache-spill-" + PrivateFolder.EffectiveUserId.ToString(System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>The bytes free in the file system of <paramref name="mapDirectory"/> (statfs), or 0 when it cannot be read.</summary>
    public static long FreeBytes(string mapDirectory)
    {
        try
        {
            return new DriveInfo(mapDirectory).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return 0;
        }
    }

    /// <summary>The most any one directory has free: the largest object that can be put in shared memory now.</summary>
    public long LargestFreeBytes() => _mapDirectories.Max(d => FreeBytes(d) + KeptBytesIn(d));

    /// <summary>True when <paramref name="contentLength"/> bytes of content fit in some directory now.</summary>
    public bool HasRoomFor(long contentLength) => _mapDirectories.Any(d => FreeBytes(d) + KeptBytesIn(d) >= SharedMemoryMap.HeaderSize + contentLength);

    /// <summary>The first directory in which <paramref name="mapName"/> exists (the primary one when none has it).</summary>
    public string DirectoryOf(string mapName) =>
        _mapDirectories.FirstOrDefault(d => File.Exists(Path.Combine(d, mapName))) ?? MapDirectory;

    /// <summary>Creates the map in the first directory with room, else in the spill folder.</summary>
    private SharedMemoryMap CreateInRoom(string name, long contentLength)
    {
        long need = SharedMemoryMap.HeaderSize + contentLength;
        foreach (string dir in _mapDirectories)
        {
            if (TryCreateFromKept(dir, name, contentLength) is { } recycled)
            {
                return recycled;
            }

            long free = FreeBytes(dir);
            if (free < need && free + KeptBytesIn(dir) >= need)
            {
                // The kept files give their room back before a new map is refused it.
                DropKept(dir);
                free = FreeBytes(dir);
            }

            if (free < need)
            {
                continue;
            }

            SharedMemoryMap? map = SharedMemoryMap.TryCreate(dir, name, contentLength, reserve: free < (2 * need) + TightSlackBytes);
            if (map is not null)
            {
                return map;
            }
        }

        string spill = SpillDirectory;
        PrivateFolder.Ensure(SpillParent);
        PrivateFolder.Ensure(spill);
        if (Interlocked.Increment(ref _spilled) == 1)
        {
            _logger.LogWarning(
                "No shared-memory directory has room for {Bytes} bytes ({Directories}); such objects are served from {Spill} and not cached",
                need, string.Join(", ", _mapDirectories.Select(d => $"{d}: {FreeBytes(d)} bytes free")), spill);
        }

        SharedMemoryMap spilled = SharedMemoryMap.TryCreate(spill, name, contentLength, reserve: false)
            ?? throw new SharedMemoryException($"No room for {need} bytes in any shared-memory directory nor in {spill}.");
        spilled.IsShared = false;
        return spilled;
    }

    /// <summary>Removes this instance's spill folder (its maps are gone with the instance).</summary>
    private void DeleteSpillDirectory()
    {
        try
        {
            if (Directory.Exists(SpillDirectory))
            {
                Directory.Delete(SpillDirectory, recursive: true);
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Best effort: the next start of this instance sweeps what is left.
        }
    }

    /// <summary>Keeps the directories that exist and can be written, in order; names the others in one start-up line.</summary>
    private string OpenDirectories(IReadOnlyList<string> roots)
    {
        var unusable = new List<string>();
        foreach (string root in roots)
        {
            string? why = Probe(root);
            if (why is null)
            {
                _mapDirectories.Add(Path.Combine(root, MapFolderName));
            }
            else
            {
                unusable.Add($"'{root}' {why}");
            }
        }

        UnusableDirectories = unusable;
        if (_mapDirectories.Count == 0)
        {
            throw new SharedMemoryException($"No usable shared-memory directory in {DirectoriesSetting} [{string.Join(", ", roots)}]: {string.Join("; ", unusable)}");
        }

        if (unusable.Count > 0)
        {
            _logger.LogWarning(
                "Shared-memory directories from {Setting} that cannot be used: {Unusable}; using {Usable}",
                DirectoriesSetting, string.Join("; ", unusable), string.Join(", ", _mapDirectories));
        }

        return Path.GetDirectoryName(_mapDirectories[0])!;
    }

    /// <summary>
    /// Why <paramref name="root"/> cannot hold maps (it is missing, or a file cannot be created in it), or null. Its map or
    /// journal folder made by someone else (another owner, a symlink, group- or other-writable) is not a reason to skip
    /// the root quietly: that throws <see cref="SharedMemoryException"/> naming the folder.
    /// </summary>
    private static string? Probe(string root)
    {
        if (!Directory.Exists(root))
        {
            return "does not exist";
        }

        string probe = Path.Combine(root, MapFolderName, $".probe-{Environment.ProcessId}-{Guid.NewGuid():N}");
        try
        {
            PrivateFolder.CheckIfPresent(Path.Combine(root, JournalFolderName));
            PrivateFolder.Ensure(Path.Combine(root, MapFolderName));
            File.WriteAllBytes(probe, []);
            File.Delete(probe);
            return null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return $"is not writable ({e.Message})";
        }
    }
}
