namespace FaaSCache.Caching;

/// <summary>
/// §3.2, Figure 6, in one place: a read is a local hit (LH), a local miss (LM) or, with peers, a remote hit or miss
/// through the key's owner (RH/RM). <see cref="ReadAsync"/> is the one entry: the application's reads, a peer's read
/// served as the owner, and a read that follows its own download (a <see cref="DownloadFollower"/>) all come through it. It owns
/// the misses in flight (concurrent misses on one key make one fetch); the bytes come in through <see cref="MapFills"/>.
/// </summary>
internal sealed class ReadPath(CacheletCore core, MapFills fills)
{
    private readonly Dictionary<string, Task<bool>> _inflight = new(StringComparer.Ordinal);

    /// <summary>
    /// Reads <paramref name="key"/>. <paramref name="forward"/> false serves a peer: never ask another member (the caller
    /// already decided this cachelet is the one to ask). With a <paramref name="follower"/>, a storage download this read
    /// makes is handed to it as soon as its first bytes are in (<see cref="DownloadFollower.Published"/>).
    /// </summary>
    public Task<ObjectLease> ReadAsync(string key, bool forward, DownloadFollower? follower, CancellationToken cancellationToken)
        => follower is null || IsPlainHit(key)
            ? ReadCoreAsync(key, forward, cancellationToken)
            : fills.Following(follower, () => ReadCoreAsync(key, forward, cancellationToken));

    /// <summary>A cached copy for a peer that asked without letting this cachelet fetch (a previous owner's hand-over); null when none.</summary>
    public ObjectLease? CachedForPeer(string key)
    {
        CacheEntry? hit = null;
        lock (core.Gate)
        {
            if (core.Entries.TryGetValue(key, out CacheEntry? entry) && !core.IsExpiredLocked(entry))
            {
                entry.RefCount++;
                core.TouchLocked(entry);
                hit = entry;
            }
        }

        return hit is null ? null : HitLease(hit, forPeer: true);
    }

    /// <summary>
    /// Whether a read of <paramref name="key"/> is a local hit that needs no storage request: such a read has no
    /// download to follow, so it takes the plain path (no follower set around it).
    /// </summary>
    private bool IsPlainHit(string key)
    {
        if (core.ChecksStorageVersion)
        {
            return false;
        }

        lock (core.Gate)
        {
            return core.Entries.TryGetValue(key, out CacheEntry? entry) && !core.IsExpiredLocked(entry) && !core.MustRevalidate(entry);
        }
    }

    /// <summary>Claims <paramref name="key"/> for a pre-warm load: null when it is cached or being read already.</summary>
    public TaskCompletionSource<bool>? TryLead(string key)
    {
        var lead = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (core.Gate)
        {
            if (core.Entries.ContainsKey(key) || _inflight.ContainsKey(key))
            {
                return null;
            }

            _inflight[key] = lead.Task;
        }

        return lead;
    }

    public void EndInflight(string key)
    {
        lock (core.Gate)
        {
            _inflight.Remove(key);
        }
    }

    private async Task<ObjectLease> ReadCoreAsync(string key, bool forward, CancellationToken cancellationToken)
    {
        core.ThrowIfDisposed();
        BlobKey.Parse(key);
        bool forPeer = !forward;
        if (core.DoNotCache.IsMatch(key))
        {
            return await FetchAsync(key, ReadSource.Bypass, cache: false, forPeer, cancellationToken).ConfigureAwait(false);
        }

        for (int attempt = 0; ; attempt++)
        {
            CacheEntry? hit = null;
            Task<bool>? inflight = null;
            TaskCompletionSource<bool>? lead = null;
            List<CacheEntry>? dead = null;
            lock (core.Gate)
            {
                if (core.Entries.TryGetValue(key, out CacheEntry? entry))
                {
                    if (core.IsExpiredLocked(entry))
                    {
                        core.DetachLocked(entry, dead = []);
                        core.Metrics.Evicted(1);
                    }
                    else
                    {
                        entry.RefCount++;
                        core.TouchLocked(entry);
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
                core.DeleteMaps(dead);
            }

            if (hit is not null)
            {
                if (core.ChecksStorageVersion || core.MustRevalidate(hit))
                {
                    // Strong reads, and owner reads right after a membership change (OwnerTrust): storage decides.
                    return await ValidateAsync(hit, forPeer, cancellationToken).ConfigureAwait(false);
                }

                if (forward && core.Peers is not null && core.ReadsFromOwner && !core.Owners.IsLocalOwner(hit.Key))
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
        lock (core.Gate)
        {
            core.RecordAccessLocked(hit.Key, AccessStatistics.AccessOf(ReadSource.LocalHit, forPeer));
        }

        core.Metrics.Read(ReadSource.LocalHit, hit.Size, forPeer);
        return new ObjectLease(core.Facade, hit, hit.Map, hit.Key, hit.Version, ReadSource.LocalHit, bytesCopied: 0);
    }

    /// <summary>Strong reads: one conditional GET; 304 is a local hit, 200 brings the new version in the same response.</summary>
    private async Task<ObjectLease> ValidateAsync(CacheEntry hit, bool forPeer, CancellationToken cancellationToken)
    {
        core.Metrics.VersionCheck();
        long writesBefore = core.WriteSequence;
        long epoch = core.Trust.Epoch;
        bool settled = !core.Unsettled;
        FetchResult<Received> result;
        try
        {
            result = await fills.FetchFromStorageAsync(hit.Key, hit.Version, cache: true, cancellationToken).ConfigureAwait(false);
        }
        catch (BlobNotFoundException)
        {
            // Deleted behind our back: forget the copy.
            core.Release(hit);
            core.Remove(hit.Key);
            throw;
        }
        catch
        {
            core.Release(hit);
            throw;
        }

        if (result.Status == FetchStatus.NotModified)
        {
            core.Confirmed(hit, epoch, settled);
            return HitLease(hit, forPeer);
        }

        core.Release(hit);
        return Admit(hit.Key, result.ETag!, result.Value!, ReadSource.LocalMiss, writesBefore, forPeer);
    }

    /// <summary>Read target "owner": one version query; a lease when the owner holds the same version, null (reference dropped) when not.</summary>
    private async Task<ObjectLease?> ConfirmWithOwnerAsync(CacheEntry hit, CancellationToken cancellationToken)
    {
        string owner = core.Owners.GetOwner(hit.Key);
        string? version;
        try
        {
            version = await core.Peers!.GetVersionAsync(owner, hit.Key, cancellationToken).ConfigureAwait(false);
        }
        catch (PeerUnavailableException e)
        {
            // Without the owner, storage is the truth: one conditional request.
            core.OwnerUnreachable(owner, hit.Key, e);
            return await ValidateAsync(hit, forPeer: false, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            core.Release(hit);
            throw;
        }

        if (version == hit.Version)
        {
            return HitLease(hit, forPeer: false);
        }

        core.Release(hit);
        return null;
    }

    /// <summary>A miss: the owner (remote hit or miss), or a previous owner after a membership change, else storage.</summary>
    private async Task<ObjectLease> MissAsync(string key, bool forward, CancellationToken cancellationToken)
    {
        ReadSource fromStorage = ReadSource.LocalMiss;
        long writesBefore = core.WriteSequence;
        IOwnerLocator owners = core.Owners;
        // Without a membership lease this cachelet's ring may be stale: storage, not whoever it thinks owns the key.
        if (forward && core.Peers is { } peers && (owners.HoldsLease || !core.RevalidatesAfterChanges))
        {
            string owner = owners.GetOwner(key);
            if (owner != owners.SelfId)
            {
                try
                {
                    if (await peers.GetAsync<Received>(owner, key, true, fills.FromPeer, cancellationToken).ConfigureAwait(false) is { } got)
                    {
                        return Admit(key, got.Version, got.Value, got.OwnerHit ? ReadSource.RemoteHit : ReadSource.RemoteMiss, writesBefore);
                    }
                }
                catch (PeerUnavailableException e)
                {
                    core.OwnerUnreachable(owner, key, e);
                    fromStorage = ReadSource.StorageFallback;
                }
            }
            else if (PreviousOwner(key) is { } previous)
            {
                // The key moved to us: take the old owner's copy if it has one (no storage traffic).
                try
                {
                    if (await peers.GetAsync<Received>(previous, key, false, fills.FromPeer, cancellationToken).ConfigureAwait(false) is { } got
                        // A handed-over copy is checked when reads need storage's version, or the key moved (OwnerTrust).
                        && ((!core.ChecksStorageVersion && !core.RevalidatesAfterChanges) || await IsStorageVersionAsync(key, got.Version, got.Value, cancellationToken).ConfigureAwait(false)))
                    {
                        return Admit(key, got.Version, got.Value, ReadSource.RemoteHit, writesBefore);
                    }
                }
                catch (PeerUnavailableException e)
                {
                    core.Logger.LogDebug(e, "Previous owner {Member} of {Key} could not hand it over", previous, key);
                }
            }
        }

        return await FetchAsync(key, fromStorage, cache: true, forPeer: !forward, cancellationToken).ConfigureAwait(false);
    }

    private async Task<ObjectLease> FetchAsync(string key, ReadSource source, bool cache, bool forPeer, CancellationToken cancellationToken)
    {
        long writesBefore = core.WriteSequence;
        FetchResult<Received> result = await fills.FetchFromStorageAsync(key, null, cache, cancellationToken).ConfigureAwait(false);
        return Admit(key, result.ETag!, result.Value!, source, writesBefore, forPeer);
    }

    /// <summary>
    /// Strong reads check every cached copy against storage, a handed-over one too (the blob may have changed outside the
    /// cache since the previous owner read it): one version request. A copy that is not storage's version is dropped.
    /// </summary>
    private async Task<bool> IsStorageVersionAsync(string key, string version, Received received, CancellationToken cancellationToken)
    {
        bool current = false;
        try
        {
            core.Metrics.VersionCheck();
            current = await core.Storage.GetVersionAsync(key, cancellationToken).ConfigureAwait(false) == version;
            return current;
        }
        finally
        {
            if (!current)
            {
                fills.Discard(received);
            }
        }
    }

    private string? PreviousOwner(string key)
    {
        if (core.PreviousRing is not { IsEmpty: false } previous)
        {
            return null;
        }

        string owner = previous.GetOwner(key);
        return owner != core.Owners.SelfId && core.Owners.Current.Contains(owner) ? owner : null;
    }

    /// <summary>
    /// Caches what a read received, unless a write to <paramref name="key"/> landed here, or an invalidation of another
    /// version arrived, after <paramref name="writesBefore"/> (the read's start): the read may have got the older version,
    /// which must not replace the newer one.
    /// </summary>
    private ObjectLease Admit(string key, string etag, Received received, ReadSource source, long writesBefore, bool forPeer = false)
    {
        CacheEntry? entry = null;
        var dead = new List<CacheEntry>();
        bool owned = core.Owners.IsLocalOwner(key);
        lock (core.Gate)
        {
            if (received.Reserved && ((core.Entries.TryGetValue(key, out CacheEntry? current) && current.WriteSequence > writesBefore) || core.InvalidatedSinceLocked(key, etag, writesBefore)))
            {
                // Served to this reader (it overlapped the write, or an invalidation of what it may have got), never cached.
                core.UnreserveLocked(received.Map.ContentLength);
            }
            else if (received.Reserved)
            {
                entry = new CacheEntry(key, etag, received.Map, owned, core.IsLarge(received.Map.ContentLength)) { RefCount = 1 };
                core.InsertLocked(entry, dead);
            }

            core.RecordAccessLocked(key, AccessStatistics.AccessOf(source, forPeer));
        }

        core.DeleteMaps(dead);
        core.Metrics.Read(source, received.Map.ContentLength, forPeer);
        return new ObjectLease(core.Facade, entry, received.Map, key, etag, source, received.BytesCopied);
    }
}
