using FaaSCache.Ownership;
using FaaSCache.SharedMemory;

namespace FaaSCache.Caching;

/// <summary>
/// Version-keyed access for hosts whose blob binding checks versions itself (the WebJobs
/// <c>IFunctionDataCache</c> contract: get or put by (key, ETag), with active references).
/// </summary>
public sealed partial class Cachelet
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
        lock (_gate)
        {
            if (!_entries.TryGetValue(key, out CacheEntry? entry) || entry.Version != version || IsExpiredLocked(entry))
            {
                // The caller reads storage itself next (and puts the object): a local miss.
                RecordAccessLocked(key, AccessKind.LocalMiss);
                Metrics.Read(ReadSource.LocalMiss, 0, forPeer: false);
                return false;
            }

            if (addReference)
            {
                AddActiveReferenceLocked(entry);
            }

            TouchLocked(entry);
            RecordAccessLocked(key, AccessKind.LocalHit);
            mapName = entry.Map.Name;
            length = entry.Size;
        }

        Metrics.Read(ReadSource.LocalHit, length, forPeer: false);
        return true;
    }

    /// <summary>
    /// Caches a map the caller wrote in this instance's map directory as <paramref name="key"/> at
    /// <paramref name="version"/> (what storage holds; nothing is uploaded). On success the cache owns the file.
    /// False, leaving the file to the caller, when it does not fit or cannot be opened.
    /// </summary>
    public bool TryAdoptVersion(string key, string version, string mapName, bool addReference)
    {
        if (_doNotCache.IsMatch(key))
        {
            return false;
        }

        SharedMemoryMap map;
        try
        {
            map = _shm.Adopt(mapName);
        }
        catch (SharedMemoryException)
        {
            return false;
        }

        var dead = new List<CacheEntry>();
        bool owned = _owners.IsLocalOwner(key);
        bool adopted = false;
        lock (_gate)
        {
            // The same version twice would mix up the active references of the two copies: keep the first.
            bool duplicate = _entries.TryGetValue(key, out CacheEntry? existing) && existing.Version == version;
            if (!duplicate && TryReserveLocked(map.ContentLength, dead))
            {
                var entry = new CacheEntry(key, version, map, owned, IsLarge(map.ContentLength));
                InsertLocked(entry, dead);
                if (addReference)
                {
                    AddActiveReferenceLocked(entry);
                }

                adopted = true;
            }
        }

        DeleteMaps(dead);
        if (!adopted)
        {
            _shm.Disown(map);
        }

        return adopted;
    }

    /// <summary>True when <paramref name="key"/> is cached at exactly <paramref name="version"/>; records no access.</summary>
    public bool HasVersion(string key, string version)
    {
        lock (_gate)
        {
            return _entries.TryGetValue(key, out CacheEntry? entry) && entry.Version == version && !IsExpiredLocked(entry);
        }
    }

    /// <inheritdoc />
    public bool RemoveVersion(string key, string version) => HasVersion(key, version) && Remove(key);

    /// <summary>Drops one active reference taken by <see cref="TryGetVersion"/> or <see cref="TryAdoptVersion"/>.</summary>
    public void ReleaseVersion(string key, string version)
    {
        CacheEntry entry;
        lock (_gate)
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

        Release(entry);
    }

    private void AddActiveReferenceLocked(CacheEntry entry)
    {
        entry.RefCount++;
        _activeReferences[(entry.Key, entry.Version)] = _activeReferences.TryGetValue((entry.Key, entry.Version), out var held)
            ? (entry, held.Count + 1)
            : (entry, 1);
    }
}
