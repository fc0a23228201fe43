namespace FaaSCache.SharedMemory;

/// <summary>
/// Worker output maps the host does not take over (copied, or refused) are deleted once no process holds them. Every
/// handed-over name is journaled ('?') before anything is done with it, so a map that is still held when the host
/// dies is removed by the next start-up's sweep like the host's own maps.
/// </summary>
public sealed partial class SharedMemoryStore
{
    private static readonly TimeSpan DiscardRetryPeriod = TimeSpan.FromMilliseconds(500);
    private readonly HashSet<string> _handedOver = new(StringComparer.Ordinal);
    private readonly HashSet<string> _pendingDiscards = new(StringComparer.Ordinal);
    private Timer? _discardTimer;

    /// <summary>Gets the number of handed-over maps waiting for their last holder to close them before they are deleted.</summary>
    public int PendingDiscards
    {
        get
        {
            lock (_gate)
            {
                return _pendingDiscards.Count;
            }
        }
    }

    /// <summary>
    /// Journals a map a worker handed over (an output) before the host reads, adopts or refuses it, so that it is not
    /// left behind whatever happens next. A name that is invalid or one of this instance's own maps is not recorded.
    /// </summary>
    public void TrackHandedOver(string mapName)
    {
        try
        {
            ValidateName(mapName);
        }
        catch (SharedMemoryException)
        {
            return;
        }

        lock (_gate)
        {
            if (!_disposed && !_live.Contains(mapName) && _handedOver.Add(mapName))
            {
                WriteJournalLinesLocked('?', [mapName]);
            }
        }
    }

    /// <summary>
    /// Deletes a worker's output map that was not taken over (its region was copied, or it was refused), when it passes
    /// the checks of <see cref="AdoptHandedOver"/>: a valid name, not one of this host's own maps, and held open by no other
    /// process (a map of another app's worker in a shared folder stays). True when it was deleted.
    /// </summary>
    public bool DiscardHandedOver(string mapName)
    {
        try
        {
            ValidateName(mapName);
        }
        catch (SharedMemoryException)
        {
            return false;
        }

        if (Owns(mapName))
        {
            return false;
        }

        try
        {
            (SharedMemoryMap map, bool proven) = SharedMemoryMap.OpenHandedOver(DirectoryOf(mapName), mapName);
            map.Dispose();
            if (proven)
            {
                SharedMemoryMap.TryDeleteFile(map.FilePath);
            }

            bool deleted = proven && !File.Exists(map.FilePath);
            if (deleted)
            {
                ForgetHandedOver(mapName);
            }

            return deleted;
        }
        catch (SharedMemoryException e) when (e is not SharedMemoryMapInUseException && !File.Exists(Path.Combine(DirectoryOf(mapName), mapName)))
        {
            // Gone already, or OpenHandedOver deleted a malformed one nobody held.
            ForgetHandedOver(mapName);
            return false;
        }
        catch (Exception e) when (e is SharedMemoryException or IOException or UnauthorizedAccessException)
        {
            // Still held by someone, or not ours to touch.
            return false;
        }
    }

    /// <summary>
    /// Deletes a handed-over map that was not taken over now if no other process holds it, else as soon as the last
    /// holder closes it (retried every 500 ms; a worker that exits closes everything). True when it was deleted now.
    /// </summary>
    public bool DiscardWhenFree(string mapName)
    {
        if (DiscardHandedOver(mapName))
        {
            return true;
        }

        lock (_gate)
        {
            if (_disposed || !_handedOver.Contains(mapName) || !_pendingDiscards.Add(mapName))
            {
                return false;
            }

            _discardTimer ??= new Timer(_ => RetryDiscards(), null, DiscardRetryPeriod, DiscardRetryPeriod);
        }

        return false;
    }

    /// <summary>
    /// True when process <paramref name="pid"/> has the map open (a descriptor) or mapped (/proc/&lt;pid&gt;/fd and maps):
    /// a worker that returned a map it still holds may have it copied; a map held only by others (another app's host)
    /// is never read for it.
    /// </summary>
    public bool IsHeldBy(string mapName, int pid)
    {
        if (pid <= 0)
        {
            return false;
        }

        try
        {
            ValidateName(mapName);
        }
        catch (SharedMemoryException)
        {
            return false;
        }

        string path = Path.Combine(DirectoryOf(mapName), mapName);
        try
        {
            foreach (string fd in Directory.EnumerateFileSystemEntries($"/proc/{pid}/fd"))
            {
                if (new FileInfo(fd).LinkTarget is { } target && (target == path || target == path + " (deleted)"))
                {
                    return true;
                }
            }

            foreach (string line in File.ReadLines($"/proc/{pid}/maps"))
            {
                if (line.EndsWith(path, StringComparison.Ordinal))
                {
                    return true;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // The process is gone (or not ours to look at): it holds nothing we may rely on.
        }

        return false;
    }

    /// <summary>A map that was tracked as handed over but is not the worker's to hand (another process holds it): forgotten, never deleted here.</summary>
    public void ForgetForeign(string mapName) => ForgetHandedOver(mapName);

    private void RetryDiscards()
    {
        string[] pending;
        lock (_gate)
        {
            pending = [.. _pendingDiscards];
        }

        foreach (string name in pending)
        {
            if (DiscardHandedOver(name) || !IsHandedOver(name))
            {
                lock (_gate)
                {
                    _pendingDiscards.Remove(name);
                }
            }
        }
    }

    private bool IsHandedOver(string mapName)
    {
        lock (_gate)
        {
            return _handedOver.Contains(mapName);
        }
    }

    /// <summary>The handed-over map is gone (deleted) or now one of this instance's own (adopted): nothing to sweep for it.</summary>
    private void ForgetHandedOver(string mapName)
    {
        lock (_gate)
        {
            _pendingDiscards.Remove(mapName);
            if (!_disposed && _handedOver.Remove(mapName) && !_live.Contains(mapName))
            {
                WriteJournalLinesLocked('-', [mapName]);
            }
        }
    }

    /// <summary>At disposal (the workers have ended): the last try for maps still waiting; what is still held is named.</summary>
    private void DiscardPendingAtDispose()
    {
        _discardTimer?.Dispose();
        RetryDiscards();
        string[] left;
        lock (_gate)
        {
            left = [.. _pendingDiscards];
        }

        if (left.Length > 0)
        {
            _logger.LogWarning(
                "{Count} worker output map(s) not taken over are still open in another process and stay in {Directory} until the next start-up's sweep: {Names}",
                left.Length, MapDirectory, string.Join(", ", left));
        }
    }
}
