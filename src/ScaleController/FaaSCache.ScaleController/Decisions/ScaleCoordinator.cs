using FaaSCache.ScaleController.Status;

namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// The one place decisions are made and carried out, one at a time: a poll's votes, a request held with no instance,
/// and an urgent vote each go through the <see cref="ScalePolicy"/>; the result is logged with its reason, kept in the
/// history, published to <see cref="ScaleDecisionState"/> (the KEDA face) and applied to the <see cref="IInstanceSource"/> (launch: the pool starts or drains; membership: the count is only recorded).
/// </summary>
public sealed class ScaleCoordinator(ScalePolicy policy, IInstanceSource pool, FrontDoorTraffic traffic, DecisionHistory history, ScaleDecisionState state, ILogger<ScaleCoordinator> logger)
{
    private readonly Lock _gate = new();
    private DateTimeOffset? _lastBusy;

    /// <summary>Gets the last poll's aggregated votes.</summary>
    public AggregatedVote? LastVotes { get; private set; }

    /// <summary>Decides on one poll's votes and carries the decision out.</summary>
    public ScaleDecision OnVotes(IReadOnlyCollection<InstanceVotes> votes)
    {
        lock (_gate)
        {
            int current = pool.LiveCount;
            AggregatedVote aggregate = VoteAggregator.Aggregate(votes, current);
            LastVotes = aggregate;
            // Invocations in flight on an instance count as requests: in membership mode no front door sees them.
            DateTimeOffset? busy = votes.Where(v => v.InFlight > 0).Select(v => (DateTimeOffset?)v.At).Max();
            _lastBusy = busy > _lastBusy || _lastBusy is null ? busy : _lastBusy;
            DateTimeOffset? lastRequest = _lastBusy > traffic.LastRequest || traffic.LastRequest is null ? _lastBusy : traffic.LastRequest;
            return Carry(policy.Decide(new PolicyInput(current, aggregate, lastRequest, traffic.Pending, traffic.IdleSince)));
        }
    }

    /// <summary>A request waits with no routable instance: scales from zero unless an instance is already starting.</summary>
    public void OnHeldRequest()
    {
        lock (_gate)
        {
            if (pool.LiveCount > 0)
            {
                return;
            }

            var none = new AggregatedVote(ScaleDirection.None, 0, "no instance to vote");
            Carry(policy.Decide(new PolicyInput(0, none, traffic.LastRequest, Math.Max(1, traffic.Pending), traffic.IdleSince), ScaleTrigger.FrontDoor));
        }
    }

    /// <summary>An instance's unrequested vote for <paramref name="target"/> instances: acts at once within maxInstances.</summary>
    public UrgentDecision OnUrgentVote(string instanceId, string voter, int target, string reason)
    {
        lock (_gate)
        {
            UrgentDecision urgent = policy.DecideUrgent(pool.LiveCount, target, instanceId, voter, reason);
            Carry(urgent.Decision);
            return urgent;
        }
    }

    private ScaleDecision Carry(ScaleDecision decision)
    {
        if (history.Add(decision))
        {
            // Changes at Information; a kept count (its reason changed) at Debug, as a poll's numbers change every time.
            logger.Log(decision.Changes ? LogLevel.Information : LogLevel.Debug, "{Trigger}: {From} -> {To} instance(s): {Reason}", decision.Trigger, decision.From, decision.To, decision.Reason);
        }

        if (decision.Changes)
        {
            pool.ScaleTo(decision.To);
        }

        state.Update(decision, traffic.Pending);
        return decision;
    }
}
