using FaaSCache.Ownership;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;

namespace FaaSCache.Caching;

/// <summary>§3.2 reads: local hit, local miss (remote hit/miss come with peers).</summary>
public sealed partial class Cachelet
{
    /// <summary>
    /// Reads <paramref name="key"/> (<c>container/blob</c>) and returns a lease on it in shared memory.
    /// Under <c>strong</c> a cached copy costs one conditional request (304, no download).
    /// Throws <see cref="BlobNotFoundException"/> when the blob does not exist.
    /// </summary>
    public Task<ObjectLease> ReadAsync(string key, CancellationToken cancellationToken = default) => ReadCoreAsync(key, forward: true, cancellationToken);

    /// <summary>
    /// Reads as the cache of the paper's Figure 6. <paramref name="forward"/> false serves a peer: never ask
    /// another member (the caller already decided this cachelet is the one to ask).
    /// </summary>
    private async Task<ObjectLease> ReadCoreAsync(string key, bool forward, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        BlobKey.Parse(key);
        bool forPeer = !forward;
        if (_doNotCache.IsMatch(key))
        {
            return await FetchAsync(key, ReadSource.Bypass, cache: false, forPeer, cancellationToken).ConfigureAwait(false);
        }

        for (int attempt = 0; ; attempt++)
        {
            CacheEntry? hit = null;
            Task<bool>? inflight = null;
            TaskCompletionSource<bool>? lead = null;
            List<CacheEntry>? dead = null;
            lock (_gate)
            {
                if (_entries.TryGetValue(key, out CacheEntry? entry))
                {
                    if (IsExpiredLocked(entry))
                    {
                        DetachLocked(entry, dead = []);
                        Metrics.Evicted(1);
                    }
                    else
                    {
                        entry.RefCount++;
                        TouchLocked(entry);
                        hit = entry;
                    }
                }

                if (hit is null && !_inflight.TryGetValue(key, out inflight) && attempt < 3)
                {
                    // Concurrent misses on one key make one fetch; the others wait for it.
                    lead = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
                    _inflight[key] = lead.Task;
                }
            }

            if (dead is not null)
            {
                DeleteMaps(dead);
            }

            if (hit is not null)
            {
                if (ChecksStorageVersion || MustRevalidate(hit))
                {
                    // Strong reads, and owner reads right after a membership change (Cachelet.Trust): storage decides.
                    return await ValidateAsync(hit, forPeer, cancellationToken).ConfigureAwait(false);
                }

                if (MustAskOwner(hit, forward))
                {
                    // Read target "owner": the local copy serves only if the owner holds the same version.
                    return await ConfirmWithOwnerAsync(hit, cancellationToken).ConfigureAwait(false)
                        ?? await MissAsync(key, forward, cancellationToken).ConfigureAwait(false);
                }

                return HitLease(hit, forPeer);
            }

            if (inflight is not null)
            {
                try
                {
                    await inflight.WaitAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
                {
                    // The leader was cancelled, not us: try again.
                }

                continue;
            }

            if (lead is null)
            {
                return await FetchAsync(key, ReadSource.LocalMiss, cache: false, forPeer, cancellationToken).ConfigureAwait(false);
            }

            ObjectLease lease;
            try
            {
                lease = await MissAsync(key, forward, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                EndInflight(key);
                lead.SetException(e);
                _ = lead.Task.Exception;
                throw;
            }

            EndInflight(key);
            lead.SetResult(lease.IsCached);
            return lease;
        }
    }

    /// <summary>A lease on an entry whose reference is already taken, counted as a local hit (a peer hit when serving a peer).</summary>
    private ObjectLease HitLease(CacheEntry hit, bool forPeer)
    {
        lock (_gate)
        {
            RecordAccessLocked(hit.Key, AccessOf(ReadSource.LocalHit, forPeer));
        }

        Metrics.Read(ReadSource.LocalHit, hit.Size, forPeer);
        return new ObjectLease(this, hit, hit.Map, hit.Key, hit.Version, ReadSource.LocalHit, bytesCopied: 0);
    }

    private void EndInflight(string key)
    {
        lock (_gate)
        {
            _inflight.Remove(key);
        }
    }

    /// <summary>Strong reads: one conditional GET; 304 is a local hit, 200 brings the new version in the same response.</summary>
    private async Task<ObjectLease> ValidateAsync(CacheEntry hit, bool forPeer, CancellationToken cancellationToken)
    {
        Metrics.VersionCheck();
        long writesBefore = WriteSequence;
        long epoch = TrustEpoch;
        bool settled = Settled;
        FetchResult<Received> result;
        try
        {
            result = await FetchFromStorageAsync(hit.Key, hit.Version, cache: true, cancellationToken).ConfigureAwait(false);
        }
        catch (BlobNotFoundException)
        {
            // Deleted behind our back: forget the copy.
            Release(hit);
            Remove(hit.Key);
            throw;
        }
        catch
        {
            Release(hit);
            throw;
        }

        if (result.Status == FetchStatus.NotModified)
        {
            Confirmed(hit, epoch, settled);
            return HitLease(hit, forPeer);
        }

        Release(hit);
        return Admit(hit.Key, result.ETag!, result.Value!, ReadSource.LocalMiss, writesBefore, forPeer);
    }
}
