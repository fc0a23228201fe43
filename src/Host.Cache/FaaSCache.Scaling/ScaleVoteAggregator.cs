namespace FaaSCache.Scaling;

/// <summary>One instance's votes: each voter's, and their aggregate by the WebJobs SDK's rule.</summary>
/// <param name="InstanceId">The instance.</param>
/// <param name="Vote">The aggregate vote.</param>
/// <param name="TargetWorkerCount">The largest target of the voters that have one.</param>
/// <param name="Voters">Each voter's answer.</param>
/// <param name="InFlight">Invocations executing now.</param>
public sealed record InstanceVotes(string InstanceId, ScaleVote Vote, int? TargetWorkerCount, IReadOnlyList<VoterResult> Voters, int InFlight);

/// <summary>
/// Asks every enabled voter of this instance and aggregates with the WebJobs SDK's rule (reference:
/// webjobs-scale-api.md): out if any votes out; in only if the worker count is above 0 and all vote in; otherwise none.
/// Target counts combine by their maximum. A voter switched off in host.json is not asked (it never holds instances).
/// </summary>
public sealed class ScaleVoteAggregator
{
    private readonly IReadOnlyList<IFaaSCacheVoter> _voters;
    private readonly InvocationMeter _meter;

    /// <summary>Initializes a new instance of the <see cref="ScaleVoteAggregator"/> class.</summary>
    public ScaleVoteAggregator(IEnumerable<IFaaSCacheVoter> voters, FaaSCacheOptions options, InvocationMeter meter, string instanceId)
    {
        ArgumentNullException.ThrowIfNull(voters);
        ArgumentNullException.ThrowIfNull(options);
        _voters = [.. voters.Where(v => IsEnabled(v.Name, options.Scaling))];
        _meter = meter;
        InstanceId = instanceId;
    }

    /// <summary>Gets this instance's id.</summary>
    public string InstanceId { get; }

    /// <summary>Gets the enabled voters.</summary>
    public IReadOnlyList<IFaaSCacheVoter> Voters => _voters;

    /// <summary>Whether host.json's <c>scaling</c> section turns the voter named <paramref name="voter"/> on.</summary>
    public static bool IsEnabled(string voter, ScalingOptions scaling)
    {
        ArgumentNullException.ThrowIfNull(scaling);
        return voter switch
        {
            ComputeScaleMonitor.VoterName => scaling.Compute,
            CacheSizeScaleMonitor.VoterName => scaling.CacheSize,
            BandwidthScaleMonitor.VoterName => scaling.Bandwidth,
            _ => true,
        };
    }

    /// <summary>The WebJobs SDK's aggregation of monitor votes.</summary>
    public static ScaleVote Aggregate(IEnumerable<ScaleVote> votes, int workerCount)
    {
        ArgumentNullException.ThrowIfNull(votes);
        List<ScaleVote> all = [.. votes];
        if (all.Contains(ScaleVote.ScaleOut))
        {
            return ScaleVote.ScaleOut;
        }

        return workerCount > 0 && all.All(v => v == ScaleVote.ScaleIn) ? ScaleVote.ScaleIn : ScaleVote.None;
    }

    /// <summary>Asks every voter for an app running <paramref name="workerCount"/> instances.</summary>
    public async Task<InstanceVotes> VoteAsync(int workerCount)
    {
        var results = new List<VoterResult>(_voters.Count);
        foreach (IFaaSCacheVoter voter in _voters)
        {
            results.Add(await voter.VoteAsync(workerCount).ConfigureAwait(false));
        }

        int? target = results.Where(r => r.TargetWorkerCount is not null).Select(r => r.TargetWorkerCount).Max();
        return new InstanceVotes(InstanceId, Aggregate(results.Select(r => r.Vote), workerCount), target, results, _meter.InFlight);
    }
}
