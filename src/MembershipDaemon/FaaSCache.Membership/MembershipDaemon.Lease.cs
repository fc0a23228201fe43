namespace FaaSCache.Membership;

/// <summary>
/// The membership lease: after each heartbeat this instance knows until when no other member can have removed it. Past
/// that (storage frozen, a partition) it tells the ring it holds no lease, so its cachelet stops acting as an owner.
/// </summary>
public sealed partial class MembershipDaemon
{
    private readonly Lock _leaseGate = new();
    private ITimer? _leaseTimer;

    /// <summary>
    /// Gets how long a heartbeat keeps the lease: the others remove a member whose heartbeat is older than the failure
    /// timeout, so the lease ends a quarter earlier (a late timer or a slow clock read must not let it outlive that).
    /// </summary>
    private TimeSpan LeaseLength => _failureTimeout * 0.75;

    /// <summary>After a heartbeat stamped <paramref name="writtenAt"/>: the lease holds again and is timed anew.</summary>
    /// <param name="writtenAt">The heartbeat time the others compare against.</param>
    /// <param name="rejoined">This instance was missing from the list: the others had removed it, whatever its timer said.</param>
    private void RenewLease(DateTimeOffset writtenAt, bool rejoined)
    {
        TimeSpan left = writtenAt + LeaseLength - _time.GetUtcNow();
        lock (_leaseGate)
        {
            _leaseTimer?.Dispose();
            _leaseTimer = left > TimeSpan.Zero ? _time.CreateTimer(_ => LoseLease(writtenAt), null, left, Timeout.InfiniteTimeSpan) : null;
        }

        if (left <= TimeSpan.Zero)
        {
            // The heartbeat took so long that it was already too old when it landed.
            LoseLease(writtenAt);
            return;
        }

        if (rejoined)
        {
            // Keys moved away and back while this instance was out: a lost-then-held lease tells the cachelet so.
            Owners.SetLease(false);
        }

        if (Owners.SetLease(true))
        {
            _logger.LogInformation("{Self} holds its membership lease of app {App} again (heartbeat at {WrittenAt:O})", SelfId, App, writtenAt);
        }
    }

    private void LoseLease(DateTimeOffset lastHeartbeat)
    {
        if (Owners.SetLease(false))
        {
            _logger.LogWarning(
                "{Self} could not renew its membership of app {App} since {LastHeartbeat:O} (failureTimeout {FailureTimeout}): the others may have removed it, so it acts as no key's owner until a heartbeat lands",
                SelfId, App, lastHeartbeat, _failureTimeout);
        }
    }

    private void StopLeaseTimer()
    {
        lock (_leaseGate)
        {
            _leaseTimer?.Dispose();
            _leaseTimer = null;
        }
    }
}
