namespace FaaSCache.Caching;

/// <summary>
/// Version-keyed access for hosts whose blob binding checks versions itself (the WebJobs
/// <c>IFunctionDataCache</c> contract: get or put by (key, ETag), with active references, which this part owns).
/// </summary>
internal sealed class VersionedCopies(CacheletCore core)
{
    private readonly Dictionary<(string Key, string Version), (CacheEntry Entry, int Count)> _activeReferences = [];

    /// <summary>
    /// Finds <paramref name="key"/> at exactly <paramref name="version"/>; optionally takes an active reference (the object
    /// is then never evicted). Counts a local hit, or a local miss when that version is not cached.
    /// </summary>
    public bool TryGetVersion(string key, string version, bool addReference, out string mapName, out long length)
    {
        mapName = string.Empty;
        length = 0;
        lock (core.Gate)
        {
            if (!core.Entries.TryGetValue(key, out CacheEntry? entry) || entry.Version != version || core.IsExpiredLocked(entry))
            {
                // The caller reads storage itself next (and puts the object): a local miss.
                core.RecordAccessLocked(key, AccessKind.LocalMiss);
                core.Metrics.Read(ReadSource.LocalMiss, 0, forPeer: false);
                return false;
            }

            if (addReference)
            {
                AddActiveReferenceLocked(entry);
            }

            core.TouchLocked(entry);
            core.RecordAccessLocked(key, AccessKind.LocalHit);
            mapName = entry.Map.Name;
            length = entry.Size;
        }

        core.Metrics.Read(ReadSource.LocalHit, length, forPeer: false);
        return true;
    }

    /// <summary>
    /// Caches a map the caller wrote in this instance's map directory as <paramref name="key"/> at
    /// <paramref name="version"/> (what storage holds; nothing is uploaded). On success the cache owns the file.
    /// False, leaving the file to the caller, when it does not fit or cannot be opened.
    /// </summary>
    public bool TryAdoptVersion(string key, string version, string mapName, bool addReference)
    {
        if (core.DoNotCache.IsMatch(key))
        {
            return false;
        }

        SharedMemoryMap map;
        try
        {
            map = core.Shm.Adopt(mapName);
        }
        catch (SharedMemoryException)
        {
            return false;
        }

        var dead = new List<CacheEntry>();
        bool owned = core.Owners.IsLocalOwner(key);
        bool adopted = false;
        lock (core.Gate)
        {
            // The same version twice would mix up the active references of the two copies: keep the first.
            bool duplicate = core.Entries.TryGetValue(key, out CacheEntry? existing) && existing.Version == version;
            if (!duplicate && core.TryReserveLocked(map.ContentLength, dead))
            {
                var entry = new CacheEntry(key, version, map, owned, core.IsLarge(map.ContentLength));
                core.InsertLocked(entry, dead);
                if (addReference)
                {
                    AddActiveReferenceLocked(entry);
                }

                adopted = true;
            }
        }

        core.DeleteMaps(dead);
        if (!adopted)
        {
            core.Shm.Disown(map);
        }

        return adopted;
    }

    /// <summary>True when <paramref name="key"/> is cached at exactly <paramref name="version"/>; records no access.</summary>
    public bool HasVersion(string key, string version)
    {
        lock (core.Gate)
        {
            return core.Entries.TryGetValue(key, out CacheEntry? entry) && entry.Version == version && !core.IsExpiredLocked(entry);
        }
    }

    /// <summary>Drops one active reference taken by <see cref="TryGetVersion"/> or <see cref="TryAdoptVersion"/>.</summary>
    public void ReleaseVersion(string key, string version)
    {
        CacheEntry entry;
        lock (core.Gate)
        {
            if (!_activeReferences.TryGetValue((key, version), out var held))
            {
                return;
            }

            entry = held.Entry;
            if (held.Count == 1)
            {
                _activeReferences.Remove((key, version));
            }
            else
            {
                _activeReferences[(key, version)] = (entry, held.Count - 1);
            }
        }

        core.Release(entry);
    }

    private void AddActiveReferenceLocked(CacheEntry entry)
    {
        entry.RefCount++;
        _activeReferences[(entry.Key, entry.Version)] = _activeReferences.TryGetValue((entry.Key, entry.Version), out var held)
            ? (entry, held.Count + 1)
            : (entry, 1);
    }
}
