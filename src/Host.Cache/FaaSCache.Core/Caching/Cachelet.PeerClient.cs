using FaaSCache.Cluster;
using FaaSCache.Options;
using FaaSCache.Ownership;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>§3.2, the client half: remote hits and misses through the owner, writes through the owner, invalidation of other copies.</summary>
public sealed partial class Cachelet
{
    private readonly IPeerClient? _peers;
    private volatile ConsistentHashRing? _previousRing;

    /// <summary>Gets a value indicating whether this cachelet talks to peers.</summary>
    public bool HasPeers => _peers is not null;

    private bool ReadsFromOwner => Policy.ReadTarget == ReadTarget.Owner;

    private bool WritesToOwner => Policy.WriteTarget == WriteTarget.Owner;

    private bool MustAskOwner(CacheEntry hit, bool forward) => forward && _peers is not null && ReadsFromOwner && !_owners.IsLocalOwner(hit.Key);

    /// <summary>Read target "owner": one version query; a lease when the owner holds the same version, null (reference dropped) when not.</summary>
    private async Task<ObjectLease?> ConfirmWithOwnerAsync(CacheEntry hit, CancellationToken cancellationToken)
    {
        string owner = _owners.GetOwner(hit.Key);
        string? version;
        try
        {
            version = await _peers!.GetVersionAsync(owner, hit.Key, cancellationToken).ConfigureAwait(false);
        }
        catch (PeerUnavailableException e)
        {
            // Without the owner, storage is the truth: one conditional request.
            OwnerUnreachable(owner, hit.Key, e);
            return await ValidateAsync(hit, forPeer: false, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            Release(hit);
            throw;
        }

        if (version == hit.Version)
        {
            return HitLease(hit, forPeer: false);
        }

        Release(hit);
        return null;
    }

    /// <summary>
    /// Forwards a write to the owner (a create-only one as such: the owner decides). Forwarded is null when this cachelet
    /// must commit it itself: it owns the key, or (OwnerGone) the owner provably never saw the write.
    /// </summary>
    private async Task<(WriteReceipt? Forwarded, bool OwnerGone)> ForwardWriteAsync(string key, SharedMemoryMap map, bool createOnly, CancellationToken cancellationToken)
    {
        string owner = _owners.GetOwner(key);
        if (owner == _owners.SelfId)
        {
            return (null, false);
        }

        PeerWriteResult result;
        try
        {
            await using Stream content = map.OpenRead();
            result = await _peers!.PutAsync(owner, key, content, map.ContentLength, createOnly, cancellationToken).ConfigureAwait(false);
        }
        catch (BlobAlreadyExistsException)
        {
            // The owner refused the create-only write: nothing was written anywhere.
            _shm.Delete(map);
            throw;
        }
        catch (PeerUnavailableException e) when (!e.MayHaveArrived)
        {
            // The owner is gone and never saw the write: the caller commits it here with synchronous persistence, so it
            // is safe in storage.
            OwnerUnreachable(owner, key, e);
            return (null, true);
        }
        catch (PeerUnavailableException e)
        {
            // The owner failed after the write reached it: it may be in storage already, and writing it again here could
            // land it a second time after a newer write. Its outcome is unknown, as for any write whose answer was lost.
            OwnerUnreachable(owner, key, e);
            throw new WriteOutcomeUnknownException(
                $"The write of {key} reached its owner {owner}, which failed before it answered ({e.Message}): the write may or may not be in storage, and it is not written a second time here. Read the blob to see which, or write it again.",
                e) { Key = key };
        }

        // Keep a local (not owned) copy: the writer reads its own write without a remote hit. The owner copied the
        // bytes it received into its own map.
        bool cached = TryInsertWritten(key, result.Version, map, dirty: false, AccessKind.Write);
        if (!cached)
        {
            _shm.Delete(map);
        }

        return (new WriteReceipt(key, result.Version, cached, result.Persisted, _options.EffectivePersist) { BytesCopied = map.ContentLength }, false);
    }

    /// <summary>After the owner committed a write under strong/owner presets: other members drop older copies (best effort; the task ends when all answered).</summary>
    private Task BroadcastInvalidation(string key, string version)
    {
        if (_peers is null || !Policy.InvalidatesOtherCopies)
        {
            return Task.CompletedTask;
        }

        return Task.WhenAll(_owners.Others().Select(member => InvalidateMemberAsync(member, key, version)));
    }

    private async Task InvalidateMemberAsync(string member, string key, string version)
    {
        try
        {
            await _peers!.InvalidateAsync(member, key, version).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            _logger.LogDebug(e, "Invalidating {Key} on {Member} failed", key, member);
        }
    }

    /// <summary>
    /// A member joined or left: remember the previous ring (keys that moved are fetched from their old owner) and
    /// re-derive "owned by me" for every cached object, so eviction's non-owned-first order and the statistics follow
    /// today's ownership, not the one at insert time.
    /// </summary>
    private void OnRingChanged(object? sender, RingChangedEventArgs e)
    {
        _previousRing = e.Previous;
        Unsettle($"the ring changed (joined: [{string.Join(", ", e.Added)}], left: [{string.Join(", ", e.Removed)}])");
        lock (_gate)
        {
            _entries.Reown(entry => string.Equals(e.Current.IsEmpty ? _owners.SelfId : e.Current.GetOwner(entry.Key), _owners.SelfId, StringComparison.Ordinal));
        }
    }

    private void OwnerUnreachable(string owner, string key, Exception e)
    {
        Metrics.OwnerUnreachable();
        _logger.LogWarning("Owner {Owner} of {Key} is unreachable ({Reason}); using storage instead", owner, key, e.Message);
    }
}
