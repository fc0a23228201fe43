namespace FaaSCache.SharedMemory;

/// <summary>
/// Creates, adopts and deletes the memory-mapped files of one host instance, in
/// <c>&lt;dir&gt;/AzureFunctions/&lt;guid&gt;</c> as the real Functions host lays them out.
/// Every map this instance creates or adopts is recorded in a journal
/// (<c>&lt;dir&gt;/FaaSCache/&lt;instanceId&gt;.maps</c>), so the maps of a crashed run are swept
/// at the next start-up, and instances sharing a directory each count only their own maps.
/// </summary>
public sealed partial class SharedMemoryStore : IDisposable
{
    /// <summary>The environment variable / app setting the real host reads.</summary>
    public const string DirectoriesSetting = "FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES";

    /// <summary>The folder appended to each directory, as the real host does.</summary>
    public const string MapFolderName = "AzureFunctions";

    private const string JournalFolderName = "FaaSCache";

    private readonly Lock _gate = new();
    private readonly HashSet<string> _live = new(StringComparer.Ordinal);
    private readonly ILogger _logger;
    private StreamWriter _journal;
    private int _journalLines;
    private int _unprovenWarned;
    private bool _disposed;

    /// <summary>
    /// Initializes a new instance of the <see cref="SharedMemoryStore"/> class and sweeps the maps left by
    /// an earlier run of the same instance id, or by any instance whose process is gone.
    /// </summary>
    /// <param name="instanceId">The host instance id (letters, digits, '-', '_', '.').</param>
    /// <param name="rootDirectories">Roots to use, filled in order (missing or unwritable ones are named at start-up and skipped); null reads <see cref="DirectoriesSetting"/> or uses /dev/shm.</param>
    /// <param name="logger">Logger.</param>
    public SharedMemoryStore(string instanceId, IReadOnlyList<string>? rootDirectories = null, ILogger? logger = null)
    {
        if (string.IsNullOrWhiteSpace(instanceId) || instanceId.Any(c => !(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.')))
        {
            throw new ArgumentException($"Instance id '{instanceId}' must be non-empty and use only letters, digits, '-', '_' and '.'.", nameof(instanceId));
        }

        InstanceId = instanceId;
        _logger = logger ?? NullLogger.Instance;
        string root = OpenDirectories(rootDirectories ?? DirectoriesFromEnvironment());
        MapDirectory = Path.Combine(root, MapFolderName);
        JournalDirectory = Path.Combine(root, JournalFolderName);
        // Every folder the sweep deletes in must be ours alone before any journal is believed (issue 31, row 7).
        PrivateFolder.Ensure(JournalDirectory);
        foreach (string folder in _mapDirectories.Select(RecycleFolder).Append(SpillParent).Append(SpillDirectory))
        {
            PrivateFolder.CheckIfPresent(folder);
        }

        SweptAtStartup = SweepStaleMaps();
        _journal = OpenJournal();
        StartPoolRefill();
    }

    /// <summary>Gets the instance id.</summary>
    public string InstanceId { get; }

    /// <summary>Gets the first folder that holds map files (see <see cref="MapDirectories"/> for all).</summary>
    public string MapDirectory { get; }

    /// <summary>Gets the folder that holds the journals.</summary>
    public string JournalDirectory { get; }

    /// <summary>Gets how many stale maps were removed at start-up.</summary>
    public int SweptAtStartup { get; }

    /// <summary>Gets the number of maps this instance owns now.</summary>
    public int MapCount
    {
        get
        {
            lock (_gate)
            {
                return _live.Count;
            }
        }
    }

    private string JournalPath => Path.Combine(JournalDirectory, InstanceId + ".maps");

    /// <summary>The roots from <see cref="DirectoriesSetting"/> (comma list) or /dev/shm.</summary>
    public static IReadOnlyList<string> DirectoriesFromEnvironment()
    {
        string? setting = Environment.GetEnvironmentVariable(DirectoriesSetting);
        if (string.IsNullOrWhiteSpace(setting))
        {
            return ["/dev/shm"];
        }

        return setting.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
    }

    /// <summary>Creates a new map for <paramref name="contentLength"/> bytes.</summary>
    public SharedMemoryMap Create(long contentLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(contentLength);
        if (contentLength <= PooledMaxContentLength && TryCreatePooled(contentLength) is { } pooled)
        {
            return pooled;
        }

        string name = Guid.NewGuid().ToString("N");
        Record('+', name);
        try
        {
            return CreateInRoom(name, contentLength);
        }
        catch
        {
            Record('-', name);
            throw;
        }
    }

    /// <summary>Takes ownership of a map another process wrote into <see cref="MapDirectory"/>.</summary>
    public SharedMemoryMap Adopt(string mapName)
    {
        ValidateName(mapName);
        var map = SharedMemoryMap.Open(DirectoryOf(mapName), mapName);
        Record('+', mapName);
        return map;
    }

    /// <summary>
    /// Takes ownership of a map a worker created for an output and handed over (FunctionRpc <c>RpcSharedMemory</c>): not
    /// one of this instance's own maps, held open by no other process (so nobody can shrink it under the mapping), and
    /// holding exactly <paramref name="expectedContentLength"/> bytes when given. A refused map is never deleted unless
    /// no other process held it.
    /// </summary>
    public SharedMemoryMap AdoptHandedOver(string mapName, long? expectedContentLength = null)
    {
        ValidateName(mapName);
        if (Owns(mapName))
        {
            throw new SharedMemoryException(
                $"Shared-memory map '{mapName}' is one of this host's own cache maps, not one the worker created: only a map a worker wrote for its output can be handed over.");
        }

        TrackHandedOver(mapName);
        SharedMemoryMap map;
        bool proven;
        try
        {
            (map, proven) = SharedMemoryMap.OpenHandedOver(DirectoryOf(mapName), mapName);
        }
        catch (SharedMemoryException) when (!File.Exists(Path.Combine(DirectoryOf(mapName), mapName)))
        {
            ForgetHandedOver(mapName); // missing, or malformed and deleted (nobody held it)
            throw;
        }

        if (expectedContentLength is long expected && expected != map.ContentLength)
        {
            map.Dispose();
            SharedMemoryMap.TryDeleteFile(map.FilePath);
            ForgetHandedOver(mapName);
            throw new SharedMemoryException(
                $"Shared-memory map '{mapName}' holds {map.ContentLength} content bytes but the output says count {expected}; it was not taken over (deleted).");
        }

        if (!proven && Interlocked.Exchange(ref _unprovenWarned, 1) == 0)
        {
            _logger.LogWarning(
                "File leases are not available in {Directory}: a worker's output map is taken over without proof that the worker closed it (a worker that keeps it open could shrink it under the host)",
                map.FilePath);
        }

        Record('+', mapName);
        return map;
    }

    /// <summary>
    /// Copies a region of a map another process wrote into <see cref="MapDirectory"/> (a worker's output when nothing
    /// adopts it), without taking the file over: it stays the writer's to delete. Read with pread, not a mapping, so a
    /// writer that shrinks the file meanwhile causes a clear error, not a SIGBUS.
    /// </summary>
    public byte[] ReadForeign(string mapName, long offset, long count)
    {
        ValidateName(mapName);
        string directory = DirectoryOf(mapName);
        using FileStream file = SharedMemoryMap.OpenExisting(Path.Combine(directory, mapName), mapName, directory, FileAccess.Read);
        long contentLength = SharedMemoryMap.ReadContentLength(file.SafeFileHandle, mapName);
        if (offset < 0 || count < 0 || offset > contentLength || count > contentLength - offset)
        {
            throw new SharedMemoryException($"Map '{mapName}' holds {contentLength} bytes; the region at {offset} of {count} bytes is outside it.");
        }

        if (count > Array.MaxLength)
        {
            throw new SharedMemoryException($"Map '{mapName}': a region of {count} bytes is larger than one copy can hold ({Array.MaxLength}).");
        }

        var bytes = new byte[count];
        int done = 0;
        while (done < bytes.Length)
        {
            int read = RandomAccess.Read(file.SafeFileHandle, bytes.AsSpan(done), SharedMemoryMap.HeaderSize + offset + done);
            if (read == 0)
            {
                throw new SharedMemoryException($"Map '{mapName}' shrank while it was read: only {done} of the {count} bytes at offset {offset} were there.");
            }

            done += read;
        }

        return bytes;
    }

    /// <summary>Unmaps <paramref name="map"/> and deletes its file.</summary>
    public void Delete(SharedMemoryMap map)
    {
        map.Dispose();
        if (TryKeep(map))
        {
            return;
        }

        SharedMemoryMap.TryDeleteFile(map.FilePath);
        Record('-', map.Name);
    }

    /// <summary>Unmaps <paramref name="map"/> and gives its file back to whoever made it (it is not deleted).</summary>
    public void Disown(SharedMemoryMap map)
    {
        map.Dispose();
        Record('-', map.Name);
    }

    /// <summary>True when <paramref name="mapName"/> is a file of this instance.</summary>
    public bool Owns(string mapName)
    {
        lock (_gate)
        {
            return _live.Contains(mapName);
        }
    }

    private static void ValidateName(string mapName)
    {
        if (string.IsNullOrEmpty(mapName) || mapName.Length > 255 || mapName is "." or ".." ||
            mapName.Any(c => !(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.')))
        {
            throw new SharedMemoryException($"'{mapName}' is not a valid shared-memory map name (a flat file name of letters, digits, '-', '_' or '.').");
        }
    }

    /// <summary>Deletes every map this instance still owns and its journal.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            DisposePoolLocked();
            DisposeKeptLocked();
        }

        // Outside the lock: the retries take it.
        DiscardPendingAtDispose();
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            foreach (string name in _live)
            {
                foreach (string dir in MapDirectories.Append(SpillDirectory))
                {
                    SharedMemoryMap.TryDeleteFile(Path.Combine(dir, name));
                }
            }

            _live.Clear();
            if (_handedOver.Count > 0)
            {
                // Handed-over maps still held elsewhere: the journal keeps only them ('?'), for the next start-up's sweep.
                _journal.Dispose();
                _journal = OpenJournal();
                _journal.Dispose();
            }
            else
            {
                _journal.Dispose();
                SharedMemoryMap.TryDeleteFile(JournalPath);
            }
            DeleteSpillDirectory();
        }
    }
}
