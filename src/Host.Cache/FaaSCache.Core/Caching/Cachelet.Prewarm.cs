using FaaSCache.Ownership;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;

namespace FaaSCache.Caching;

/// <summary>§3.3: the Load Daemon's loads. They fill free space only, and count as no access of any kind.</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Loads the current version of <paramref name="key"/> from storage into free capacity, for pre-warm: it never
    /// evicts, records no access (a pre-warmed object must earn its next selection by being read), and a read of the
    /// same key meanwhile waits for it rather than downloading it twice. Cancelling (an invocation started) leaves
    /// nothing behind, and a read waiting for it fetches the key itself.
    /// </summary>
    /// <param name="key">The key, <c>container/blob</c>.</param>
    /// <param name="cancellationToken">Cancels the download.</param>
    /// <returns>What the load did.</returns>
    public async Task<PrewarmLoadResult> PrewarmAsync(string key, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        if (_doNotCache.IsMatch(key))
        {
            return new PrewarmLoadResult(PrewarmLoadOutcome.Excluded);
        }

        var lead = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            if (_entries.ContainsKey(key) || _inflight.ContainsKey(key))
            {
                return new PrewarmLoadResult(PrewarmLoadOutcome.AlreadyCached);
            }

            _inflight[key] = lead.Task;
        }

        try
        {
            FetchResult<SharedMemoryMap?> fetched = await LoadIntoFreeSpaceAsync(key, cancellationToken).ConfigureAwait(false);
            if (fetched.Value is not { } map)
            {
                return new PrewarmLoadResult(PrewarmLoadOutcome.NoRoom);
            }

            bool owned = _owners.IsLocalOwner(key);
            bool raced;
            lock (_gate)
            {
                // A write (a peer's, as the owner) that landed meanwhile is newer than what storage gave us: keep it.
                raced = _entries.ContainsKey(key);
                if (raced)
                {
                    UnreserveLocked(map.ContentLength);
                }
                else
                {
                    InsertLocked(new CacheEntry(key, fetched.ETag!, map, owned, IsLarge(map.ContentLength)), []);
                }
            }

            if (raced)
            {
                _shm.Delete(map);
                return new PrewarmLoadResult(PrewarmLoadOutcome.AlreadyCached);
            }

            return new PrewarmLoadResult(PrewarmLoadOutcome.Loaded, fetched.ETag, map.ContentLength);
        }
        catch (BlobNotFoundException)
        {
            return new PrewarmLoadResult(PrewarmLoadOutcome.NotFound);
        }
        finally
        {
            EndInflight(key);
            // Waiting readers look again: they find the object, or fetch it themselves (cancelled, failed or no room).
            lead.SetResult(true);
        }
    }
}
