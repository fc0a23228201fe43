namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// Combines the votes of an app's instances with the WebJobs SDK's rule (ScaleManager's aggregation, §4): scale out if
/// ANY voter of any instance wants out, scale in only if ALL of them want in; out-voters' target counts combine by max.
/// </summary>
public static class VoteAggregator
{
    /// <summary>Aggregates <paramref name="reports"/> for an app that runs <paramref name="current"/> instances now.</summary>
    public static AggregatedVote Aggregate(IReadOnlyCollection<InstanceVotes> reports, int current)
    {
        ArgumentNullException.ThrowIfNull(reports);
        var all = reports.SelectMany(r => r.Votes.Select(v => (r.InstanceId, Vote: v))).ToList();
        if (all.Count == 0)
        {
            return new AggregatedVote(ScaleDirection.None, current, "no votes");
        }

        var outs = all.Where(v => v.Vote.Vote > 0).ToList();
        if (outs.Count > 0)
        {
            int targeted = outs.Select(v => v.Vote.TargetWorkerCount ?? 0).Max();
            // An out-vote whose target is already met (or that has none) still asks for one more instance.
            int target = targeted > current ? targeted : current + 1;
            return new AggregatedVote(ScaleDirection.Out, target, "out: " + Describe(outs));
        }

        if (all.All(v => v.Vote.Vote < 0))
        {
            return new AggregatedVote(ScaleDirection.In, Math.Max(0, current - 1), string.Create(CultureInfo.InvariantCulture, $"in: all {all.Count} votes in ({Describe(all.Take(3))})"));
        }

        return new AggregatedVote(ScaleDirection.None, current, "none: " + Describe(all.Where(v => v.Vote.Vote == 0)));
    }

    private static string Describe(IEnumerable<(string InstanceId, VoterVote Vote)> votes) =>
        string.Join("; ", votes.Select(v => $"{v.InstanceId}/{v.Vote.Voter}: {v.Vote.Reason}"));
}
