using FaaSCache.Options;
using FaaSCache.Ownership;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>
/// Owner reads that stay right across membership changes (Table 3's <c>owner</c>: strong while the owner lives). The
/// ring changes, or this instance loses its membership lease (it could not heartbeat: storage frozen, a partition): then
/// writes may have gone to another owner that this cachelet never heard of, so every copy it holds is checked against
/// storage (one conditional request) before it is served again, and while the lease is lost or the members' views may
/// still differ (two heartbeat intervals) every copy is checked on every read. Sync persistence makes storage the
/// truth: an acknowledged write is there.
/// </summary>
public sealed partial class Cachelet
{
    private long _unsettledUntilTicks;
    private long _trustEpoch;

    /// <summary>Gets a value indicating whether this cachelet's copies may be served as the owner's without a storage check.</summary>
    public bool Settled => !Unsettled;

    /// <summary>The presets whose reads trust the owner's copy and whose writes are in storage before they are acknowledged.</summary>
    private bool RevalidatesAfterChanges => _peers is not null && ReadsFromOwner && _options.EffectivePersist == PersistMode.Sync;

    private bool Unsettled => !_owners.HoldsLease || _time.GetUtcNow().UtcTicks < Interlocked.Read(ref _unsettledUntilTicks);

    /// <summary>How long the members' views of the ring may differ after a change: each sees it at its next heartbeat or watch.</summary>
    private TimeSpan SettlePeriod => _options.Membership.HeartbeatInterval * 2;

    private long TrustEpoch => Interlocked.Read(ref _trustEpoch);

    /// <summary>True when <paramref name="hit"/> must be checked against storage before it is served (takes the lock).</summary>
    private bool MustRevalidate(CacheEntry hit)
    {
        if (!RevalidatesAfterChanges)
        {
            return false;
        }

        lock (_gate)
        {
            return !hit.Dirty && (hit.Suspect || Unsettled);
        }
    }

    /// <summary>A copy entering the index while views may differ is suspect until a check after they settled.</summary>
    private void MarkIfUnsettledLocked(CacheEntry entry)
    {
        if (RevalidatesAfterChanges && !entry.Dirty && Unsettled)
        {
            entry.Suspect = true;
        }
    }

    /// <summary>Storage confirmed <paramref name="hit"/> in a check begun at <paramref name="epoch"/>: trusted again if nothing changed since and views had settled.</summary>
    private void Confirmed(CacheEntry hit, long epoch, bool settledAtStart)
    {
        if (!settledAtStart)
        {
            return;
        }

        lock (_gate)
        {
            if (TrustEpoch == epoch && !hit.Detached)
            {
                hit.Suspect = false;
            }
        }
    }

    private void OnLeaseChanged(object? sender, LeaseChangedEventArgs e) =>
        Unsettle(e.Held ? "it holds its membership lease again" : "it lost its membership lease (no heartbeat in time)");

    /// <summary>How long a write through an instance without its membership lease waits for it before it fails.</summary>
    private TimeSpan LeaseWait => _options.Membership.FailureTimeout;

    /// <summary>
    /// Without its lease this instance's ring may be stale (the others may have removed it and moved its keys), so it may
    /// not commit a write as a key's owner, nor pick the owner to forward it to: the write waits for the next heartbeat to
    /// land (lease and ring fresh again), at most <see cref="LeaseWait"/>, and otherwise fails, not made.
    /// </summary>
    private async Task WaitForLeaseAsync(string key, CancellationToken cancellationToken)
    {
        if (!RevalidatesAfterChanges || _owners.HoldsLease)
        {
            return;
        }

        var regained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnChanged(object? sender, LeaseChangedEventArgs e)
        {
            if (e.Held)
            {
                regained.TrySetResult();
            }
        }

        _owners.LeaseChanged += OnChanged;
        try
        {
            if (!_owners.HoldsLease)
            {
                await regained.Task.WaitAsync(LeaseWait, _time, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (TimeoutException)
        {
            throw new MembershipLeaseLostException(
                $"The write of {key} was not made: instance {_owners.SelfId} has had no membership lease for the last {LeaseWait.TotalSeconds:0.#} s " +
                "(its heartbeats do not reach storage, or it is cut off), so it cannot tell which member owns the key. Try again once storage answers.")
            { Key = key };
        }
        finally
        {
            _owners.LeaseChanged -= OnChanged;
        }
    }

    /// <summary>
    /// While views may differ (unsettled), another member may still serve its copy of <paramref name="key"/> as the owner:
    /// the write is acknowledged only once the others were told to drop older copies (bounded by the settle period; a
    /// member that does not answer is the membership's to remove). Settled, the invalidation stays best effort.
    /// </summary>
    private async Task InvalidateOthersAsync(string key, string version)
    {
        Task sent = BroadcastInvalidation(key, version);
        if (!RevalidatesAfterChanges || !Unsettled)
        {
            return;
        }

        try
        {
            await sent.WaitAsync(SettlePeriod, _time).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            _logger.LogDebug("Invalidating {Key} on the other members took longer than {Period}; acknowledged anyway", key, SettlePeriod);
        }
    }

    /// <summary>Every copy becomes suspect and every read checks storage for the settle period.</summary>
    private void Unsettle(string reason)
    {
        if (!RevalidatesAfterChanges)
        {
            return;
        }

        long until = (_time.GetUtcNow() + SettlePeriod).UtcTicks;
        long seen = Interlocked.Read(ref _unsettledUntilTicks);
        while (seen < until && Interlocked.CompareExchange(ref _unsettledUntilTicks, until, seen) is long now && now != seen)
        {
            seen = now;
        }

        int marked = 0;
        lock (_gate)
        {
            Interlocked.Increment(ref _trustEpoch);
            foreach (CacheEntry entry in _entries.Entries)
            {
                if (!entry.Dirty)
                {
                    entry.Suspect = true;
                    marked++;
                }
            }
        }

        _logger.LogInformation(
            "{Self}: {Reason}; its {Count} cached copies are checked against storage before they are served again",
            _owners.SelfId, reason, marked);
    }
}
