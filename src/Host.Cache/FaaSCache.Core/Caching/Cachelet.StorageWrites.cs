using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>
/// Writes storage took without the cache's write path (the SDK endpoint forwards writes that carry what the cache does
/// not keep, and deletes): every instance's copy is dropped as after a cache write (§3.2), and reads in flight when the
/// copy was dropped do not cache what they fetched before it.
/// </summary>
public sealed partial class Cachelet
{
    /// <summary>The version an invalidation names for a blob that no longer exists: no copy has it, so every copy goes.</summary>
    private const string DeletedVersion = "(deleted)";

    // Reads that began before a drop may carry the older version: they must not cache it (bounded, oldest forgotten first).
    private const int MaxInvalidationMarks = 4096;
    private readonly Dictionary<string, (long At, string Version)> _invalidatedAt = new(StringComparer.Ordinal);
    private readonly Queue<(string Key, long At)> _invalidationOrder = new();

    /// <summary>
    /// Storage took a write of <paramref name="key"/> that did not go through the cache (its new ETag
    /// <paramref name="version"/>; null for a delete or when storage did not say): drops this cachelet's copy and, under
    /// the presets whose writes invalidate other copies, has every other member drop a copy of another version, with the
    /// invalidation message the owner sends after a cache write. Unlike a cache write, no owner holds the new version
    /// here, and the owner serves its own copy without asking anyone: so this returns once every member answered (at
    /// most the settle period; a member that does not answer is the membership's to remove).
    /// </summary>
    public async Task InvalidateEverywhereAsync(string key, string? version, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        FaaSCache.Storage.BlobKey.Parse(key);
        string current = string.IsNullOrEmpty(version) ? DeletedVersion : version;
        var dead = new List<CacheEntry>();
        lock (_gate)
        {
            if (_entries.TryGetValue(key, out CacheEntry? entry) && !entry.Dirty)
            {
                DetachLocked(entry, dead);
            }

            MarkInvalidatedLocked(key, current);
        }

        DeleteMaps(dead);
        try
        {
            await BroadcastInvalidation(key, current).WaitAsync(SettlePeriod, _time, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            _logger.LogWarning("Invalidating {Key} on the other members took longer than {Period}; a member that did not answer may serve its copy until it is removed", key, SettlePeriod);
        }
    }

    /// <summary>Remembers that copies of <paramref name="key"/> other than <paramref name="version"/> were dropped now.</summary>
    private void MarkInvalidatedLocked(string key, string version)
    {
        long at = ++_writeSequence;
        _invalidatedAt[key] = (at, version);
        _invalidationOrder.Enqueue((key, at));
        while (_invalidationOrder.Count > MaxInvalidationMarks)
        {
            (string oldKey, long oldAt) = _invalidationOrder.Dequeue();
            if (_invalidatedAt.TryGetValue(oldKey, out (long At, string Version) mark) && mark.At == oldAt)
            {
                _invalidatedAt.Remove(oldKey);
            }
        }
    }

    /// <summary>True when a copy of <paramref name="key"/> other than <paramref name="version"/> was dropped after <paramref name="writesBefore"/>.</summary>
    private bool InvalidatedSinceLocked(string key, string version, long writesBefore)
        => _invalidatedAt.TryGetValue(key, out (long At, string Version) mark) && mark.At > writesBefore && mark.Version != version;
}
