namespace FaaSCache.SharedMemory;

/// <summary>
/// A small pool of anonymous (O_TMPFILE), already-journaled files in the first map folder, refilled off the hot path,
/// so creating a small map (a remote hit's requester map, where creating it was a large share of a 1 KB remote hit) costs fallocate + mmap + header + link instead of a
/// name, a journal write, statfs and a dozen file-opening calls. Pooled files have no name until taken, so no folder
/// lists them and a crash frees them with the process; their names are journaled '+' before they can be linked.
/// </summary>
public sealed partial class SharedMemoryStore
{
    /// <summary>Maps of at most this many content bytes are made from the pool (larger ones are dominated by their copy).</summary>
    internal const long PooledMaxContentLength = 64 * 1024;

    /// <summary>How many anonymous files the pool keeps open and ready.</summary>
    internal const int PoolTarget = 16;

    /// <summary>A refill starts when a take leaves this many or fewer: one thread wake-up per few takes, not per take.</summary>
    private const int PoolLowWater = PoolTarget / 2;

    private readonly Stack<PooledFile> _pool = new();
    private readonly HashSet<string> _pooledNames = new(StringComparer.Ordinal);
    private Task _poolRefill = Task.CompletedTask;
    private int _poolRefilling;
    private volatile bool _poolOff;
    private long _pooledCreates;

    /// <summary>Gets the running (or last) refill of the pool; tests await it.</summary>
    internal Task PoolRefill => Volatile.Read(ref _poolRefill);

    /// <summary>Gets how many maps were made from the pool so far.</summary>
    internal long PooledCreates => Interlocked.Read(ref _pooledCreates);

    /// <summary>Gets how many anonymous files are ready now.</summary>
    internal int PooledCount
    {
        get
        {
            lock (_gate)
            {
                return _pool.Count;
            }
        }
    }

    /// <summary>Makes a small map from a pooled file; null when none is ready or the first folder is full (the caller falls back).</summary>
    private SharedMemoryMap? TryCreatePooled(long contentLength)
    {
        PooledFile? file = null;
        int left = 0;
        lock (_gate)
        {
            if (!_disposed)
            {
                _ = _pool.TryPop(out file);
                left = _pool.Count;
            }
        }

        if (left <= PoolLowWater)
        {
            StartPoolRefill();
        }

        if (file is null)
        {
            return null;
        }

        SharedMemoryMap? map;
        try
        {
            map = SharedMemoryMap.TryCreateFromAnonymous(file.Handle, _mapDirectories[0], file.Name, contentLength);
        }
        catch (Exception e) when (e is SharedMemoryException or IOException or UnauthorizedAccessException)
        {
            // Nothing was linked; the slow path still works, so the pool is switched off with one line.
            ForgetPooled(file);
            _poolOff = true;
            _logger.LogWarning(e, "Small shared-memory maps are no longer made from the pool of anonymous files in {Directory}", _mapDirectories[0]);
            return null;
        }

        if (map is null)
        {
            // The first folder is full: the file is still empty and unnamed, keep it for later.
            lock (_gate)
            {
                if (!_disposed)
                {
                    _pool.Push(file);
                    return null;
                }
            }

            ForgetPooled(file);
            return null;
        }

        bool late;
        lock (_gate)
        {
            _pooledNames.Remove(file.Name);
            late = _disposed || !_live.Add(file.Name);
        }

        if (late)
        {
            // Disposed meanwhile: its files were deleted, so this one is too (the mapping stays usable).
            SharedMemoryMap.TryDeleteFile(map.FilePath);
        }

        Interlocked.Increment(ref _pooledCreates);
        return map;
    }

    /// <summary>Starts one background refill unless one runs (or the pool is off).</summary>
    private void StartPoolRefill()
    {
        if (_poolOff || Interlocked.CompareExchange(ref _poolRefilling, 1, 0) != 0)
        {
            return;
        }

        Volatile.Write(ref _poolRefill, Task.Run(RefillPool));
    }

    private void RefillPool()
    {
        try
        {
            while (!_poolOff)
            {
                string[] names;
                lock (_gate)
                {
                    int missing = PoolTarget - _pool.Count;
                    if (_disposed || missing <= 0)
                    {
                        return;
                    }

                    names = [.. Enumerable.Range(0, missing).Select(_ => Guid.NewGuid().ToString("N"))];
                    _pooledNames.UnionWith(names);
                    WriteJournalLinesLocked('+', names); // one write for the batch, before any can be linked
                }

                for (int i = 0; i < names.Length; i++)
                {
                    SafeFileHandle? handle = SharedMemoryMap.TryOpenAnonymous(_mapDirectories[0], out int errno);
                    if (handle is null)
                    {
                        ForgetPooledNames(names[i..]);
                        _poolOff = true;
                        _logger.LogInformation(
                            "Anonymous files (O_TMPFILE) cannot be opened in {Directory} (errno {Errno}): small maps are created without the pool",
                            _mapDirectories[0], errno);
                        return;
                    }

                    var file = new PooledFile(names[i], handle);
                    lock (_gate)
                    {
                        if (!_disposed)
                        {
                            _pool.Push(file);
                            continue;
                        }
                    }

                    handle.Dispose();
                    return;
                }
            }
        }
        finally
        {
            Volatile.Write(ref _poolRefilling, 0);
        }
    }

    /// <summary>Closes a pooled file that will not become a map and journals its name '-'.</summary>
    private void ForgetPooled(PooledFile file)
    {
        file.Handle.Dispose();
        ForgetPooledNames([file.Name]);
    }

    private void ForgetPooledNames(IReadOnlyCollection<string> names)
    {
        lock (_gate)
        {
            _pooledNames.ExceptWith(names);
            if (!_disposed)
            {
                WriteJournalLinesLocked('-', names);
            }
        }
    }

    /// <summary>On dispose: closes every pooled file (unnamed, so nothing is left on disk) and journals their names '-'.</summary>
    private void DisposePoolLocked()
    {
        while (_pool.TryPop(out PooledFile? file))
        {
            file.Handle.Dispose();
        }

        if (_pooledNames.Count > 0)
        {
            WriteJournalLinesLocked('-', [.. _pooledNames]);
            _pooledNames.Clear();
        }
    }

    private sealed record PooledFile(string Name, SafeFileHandle Handle);
}
