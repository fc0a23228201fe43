namespace FaaSCache.SharedMemory;

/// <summary>
/// Large maps' files are kept a while after their map is deleted (moved to the folder's <c>.recycled</c> folder, still
/// journaled) and given to the next large map of about their size: its bytes are then written over pages the file
/// system already has. A fresh tmpfs page costs its allocation and zeroing on every machine, and on this project's VMs
/// far more when the hypervisor has reclaimed the guest's free memory (a 128 MB fill: ~45 ms into new pages against
/// ~17 ms over kept ones when idle, hundreds of ms after other processes freed memory); a cache that evicts to admit
/// writes one object over another's pages. At most <see cref="RecycleMaxBytes"/> are kept (and never more than a
/// sixteenth of the file system, nor while it is over half full), each file at most <see cref="RecycleMaxIdle"/>, and a
/// folder's kept files go first when it runs out of room, so the memory goes back to the system when the cache is idle
/// or full.
/// </summary>
public sealed partial class SharedMemoryStore
{
    /// <summary>Maps of at least this many content bytes have their file kept when deleted.</summary>
    internal const long RecycleMinContentLength = 1L << 20;

    /// <summary>The most file bytes kept at once.</summary>
    internal const long RecycleMaxBytes = 512L << 20;

    /// <summary>The folder (inside each map folder) that holds the kept files.</summary>
    internal const string RecycleFolderName = ".recycled";

    /// <summary>How long a kept file waits for a taker before it is deleted.</summary>
    internal static readonly TimeSpan RecycleMaxIdle = TimeSpan.FromSeconds(10);

    private readonly List<KeptFile> _kept = [];
    private long _recycledCreates;
    private long _keepSuspendedUntil;
    private Timer? _keptExpiry;

    /// <summary>Gets how many maps were made over a kept file so far.</summary>
    internal long RecycledCreates => Interlocked.Read(ref _recycledCreates);

    /// <summary>Gets the bytes of the files kept now.</summary>
    internal long KeptBytes
    {
        get
        {
            lock (_gate)
            {
                return _kept.Sum(k => k.Length);
            }
        }
    }

    /// <summary>The kept files' folder of a map folder.</summary>
    internal static string RecycleFolder(string mapDirectory) => Path.Combine(mapDirectory, RecycleFolderName);

    /// <summary>
    /// Moves a deleted (already unmapped) map's file aside for a later map, its journal line kept; false when it is not
    /// kept (small, not in a map folder, over the bound, or the move failed) and must be deleted as usual.
    /// </summary>
    private bool TryKeep(SharedMemoryMap map)
    {
        if (map.ContentLength < RecycleMinContentLength || !map.IsShared || Environment.TickCount64 < Interlocked.Read(ref _keepSuspendedUntil))
        {
            return false;
        }

        string? directory = Path.GetDirectoryName(map.FilePath);
        long length = SharedMemoryMap.HeaderSize + map.ContentLength;
        // A worker may still map it (a Node.js Buffer kept past its invocation): its pages are then never written over.
        if (directory is null || !_mapDirectories.Contains(directory) || length > RecycleMaxBytes || !HasRoomToKeep(directory, length) || !SharedMemoryMap.HeldByNobody(map.FilePath, map.Name))
        {
            return false;
        }

        lock (_gate)
        {
            if (_disposed)
            {
                return false;
            }

            // The oldest kept files make room for a newer one.
            while (_kept.Count > 0 && _kept.Sum(k => k.Length) + length > RecycleMaxBytes)
            {
                DropKeptLocked(0);
            }

            try
            {
                string folder = RecycleFolder(directory);
                PrivateFolder.Ensure(folder);
                File.Move(map.FilePath, Path.Combine(folder, map.Name));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return false;
            }
            catch (SharedMemoryException e)
            {
                // Only this user can write in the map folder, so this is a folder made by hand: say so, delete as usual.
                _logger.LogWarning("A deleted map's file is not kept: {Reason}", e.Message);
                return false;
            }

            // Off the live set (the map is gone) but still journaled '+', so a crash's sweep deletes the kept file too.
            _live.Remove(map.Name);
            _kept.Add(new KeptFile(directory, map.Name, length, Environment.TickCount64));
            _keptExpiry ??= new Timer(_ => ExpireKept(), null, RecycleMaxIdle, RecycleMaxIdle);
            return true;
        }
    }

    /// <summary>
    /// True when <paramref name="length"/> more kept bytes leave the file system of <paramref name="directory"/> at least
    /// half free and its kept files within a sixteenth of its size: workers write their outputs in the same folder and know
    /// nothing of kept files (a container's 64 MB /dev/shm keeps at most 4 MB; an 8 MB one nothing).
    /// </summary>
    private bool HasRoomToKeep(string directory, long length)
    {
        long total;
        long free;
        try
        {
            var drive = new DriveInfo(directory);
            total = drive.TotalSize;
            free = drive.AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return false;
        }

        return free - length >= total / 2 && KeptBytesIn(directory) + length <= total / 16;
    }

    /// <summary>
    /// A new map of <paramref name="contentLength"/> bytes over a kept file in <paramref name="directory"/> of at least
    /// its size and at most twice it (cut to size), named <paramref name="name"/> (journaled '+' by the caller); null when
    /// none fits.
    /// </summary>
    private SharedMemoryMap? TryCreateFromKept(string directory, string name, long contentLength)
    {
        if (contentLength < RecycleMinContentLength)
        {
            return null;
        }

        long need = SharedMemoryMap.HeaderSize + contentLength;
        KeptFile? taken = null;
        lock (_gate)
        {
            int best = -1;
            for (int i = 0; i < _kept.Count; i++)
            {
                KeptFile k = _kept[i];
                if (k.Directory == directory && k.Length >= need && k.Length <= 2 * need && (best < 0 || k.Length < _kept[best].Length))
                {
                    best = i;
                }
            }

            if (best < 0)
            {
                return null;
            }

            taken = _kept[best];
            _kept.RemoveAt(best);
        }

        string keptPath = Path.Combine(RecycleFolder(directory), taken.Name);
        string path = Path.Combine(directory, name);
        SharedMemoryMap? map = null;
        try
        {
            File.Move(keptPath, path);
            map = SharedMemoryMap.OverKeptFile(path, name, contentLength);
            Interlocked.Increment(ref _recycledCreates);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or SharedMemoryException)
        {
            SharedMemoryMap.TryDeleteFile(keptPath);
            SharedMemoryMap.TryDeleteFile(path);
        }
        finally
        {
            // The kept name is gone either way.
            lock (_gate)
            {
                if (!_disposed)
                {
                    WriteJournalLinesLocked('-', [taken.Name]);
                }
            }
        }

        return map;
    }

    /// <summary>
    /// §3.4: the memory is needed (the Memory Daemon): every kept file is deleted, so its pages go back to the system, and
    /// no deleted map's file is kept for <paramref name="suspendFor"/>, so that what is evicted next frees its pages too.
    /// Returns the bytes deleted.
    /// </summary>
    internal long ReleaseKept(TimeSpan suspendFor)
    {
        long until = Environment.TickCount64 + (long)suspendFor.TotalMilliseconds;
        long current;
        while ((current = Interlocked.Read(ref _keepSuspendedUntil)) < until && Interlocked.CompareExchange(ref _keepSuspendedUntil, until, current) != current)
        {
        }

        lock (_gate)
        {
            long released = _kept.Sum(k => k.Length);
            while (_kept.Count > 0)
            {
                DropKeptLocked(_kept.Count - 1);
            }

            return released;
        }
    }

    /// <summary>Deletes the kept files of <paramref name="directory"/> (it needs the room).</summary>
    private void DropKept(string directory)
    {
        lock (_gate)
        {
            for (int i = _kept.Count - 1; i >= 0; i--)
            {
                if (_kept[i].Directory == directory)
                {
                    DropKeptLocked(i);
                }
            }
        }
    }

    /// <summary>The bytes kept in <paramref name="directory"/>'s recycle folder (free for a new map: they go first).</summary>
    private long KeptBytesIn(string directory)
    {
        lock (_gate)
        {
            return _kept.Where(k => k.Directory == directory).Sum(k => k.Length);
        }
    }

    private void ExpireKept()
    {
        long now = Environment.TickCount64;
        lock (_gate)
        {
            for (int i = _kept.Count - 1; i >= 0; i--)
            {
                if (now - _kept[i].Since >= (long)RecycleMaxIdle.TotalMilliseconds)
                {
                    DropKeptLocked(i);
                }
            }
        }
    }

    /// <summary>Deletes one kept file and its journal line; the caller holds <c>_gate</c>.</summary>
    private void DropKeptLocked(int index)
    {
        KeptFile k = _kept[index];
        _kept.RemoveAt(index);
        SharedMemoryMap.TryDeleteFile(Path.Combine(RecycleFolder(k.Directory), k.Name));
        if (!_disposed)
        {
            WriteJournalLinesLocked('-', [k.Name]);
        }
    }

    /// <summary>At dispose, under <c>_gate</c>: every kept file goes, and the folders if empty.</summary>
    private void DisposeKeptLocked()
    {
        _keptExpiry?.Dispose();
        _keptExpiry = null;
        while (_kept.Count > 0)
        {
            DropKeptLocked(_kept.Count - 1);
        }

        foreach (string directory in _mapDirectories)
        {
            try
            {
                Directory.Delete(RecycleFolder(directory));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Not empty (another instance keeps files there) or already gone.
            }
        }
    }

    private sealed record KeptFile(string Directory, string Name, long Length, long Since);
}
