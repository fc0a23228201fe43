using FaaSCache.Ownership;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>
/// Owner reads that stay right across membership changes (<see cref="OwnerTrust"/> keeps the window and the epoch):
/// here what it means for the copies, which the cachelet's lock guards. Sync persistence makes storage the truth: an
/// acknowledged write is there.
/// </summary>
public sealed partial class Cachelet
{
    private readonly OwnerTrust _trust;

    /// <summary>Gets a value indicating whether this cachelet's copies may be served as the owner's without a storage check.</summary>
    public bool Settled => !_trust.Unsettled;

    /// <summary>The presets whose reads trust the owner's copy and whose writes are in storage before they are acknowledged.</summary>
    private bool RevalidatesAfterChanges => _trust.Applies;

    private bool Unsettled => _trust.Unsettled;

    private TimeSpan SettlePeriod => _trust.SettlePeriod;

    private long TrustEpoch => _trust.Epoch;

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

    private Task WaitForLeaseAsync(string key, CancellationToken cancellationToken) => _trust.WaitForLeaseAsync(key, cancellationToken);

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
        int marked = 0;
        lock (_gate)
        {
            // The new epoch under the lock: a check that confirms a copy (Confirmed, under the lock too) sees it or came before.
            if (!_trust.Unsettle())
            {
                return;
            }

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
