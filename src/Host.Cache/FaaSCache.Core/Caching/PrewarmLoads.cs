namespace FaaSCache.Caching;

/// <summary>§3.3: the Load Daemon's loads. They fill free space only, and count as no access of any kind.</summary>
internal sealed class PrewarmLoads(CacheletCore core, ReadPath reads, MapFills fills)
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
        if (core.DoNotCache.IsMatch(key))
        {
            return new PrewarmLoadResult(PrewarmLoadOutcome.Excluded);
        }

        if (reads.TryLead(key) is not { } lead)
        {
            return new PrewarmLoadResult(PrewarmLoadOutcome.AlreadyCached);
        }

        try
        {
            FetchResult<SharedMemoryMap?> fetched = await fills.LoadIntoFreeSpaceAsync(key, cancellationToken).ConfigureAwait(false);
            if (fetched.Value is not { } map)
            {
                return new PrewarmLoadResult(PrewarmLoadOutcome.NoRoom);
            }

            bool owned = core.Owners.IsLocalOwner(key);
            bool raced;
            lock (core.Gate)
            {
                // A write (a peer's, as the owner) that landed meanwhile is newer than what storage gave us: keep it.
                raced = core.Entries.ContainsKey(key);
                if (raced)
                {
                    core.UnreserveLocked(map.ContentLength);
                }
                else
                {
                    core.InsertLocked(new CacheEntry(key, fetched.ETag!, map, owned, core.IsLarge(map.ContentLength)), []);
                }
            }

            if (raced)
            {
                core.Shm.Delete(map);
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
            reads.EndInflight(key);
            // Waiting readers look again: they find the object, or fetch it themselves (cancelled, failed or no room).
            lead.SetResult(true);
        }
    }
}
