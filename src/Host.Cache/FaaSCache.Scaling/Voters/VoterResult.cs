namespace FaaSCache.Scaling.Voters;

/// <summary>One voter's answer to one query: the vote, its target count if it has one, why, and the numbers.</summary>
/// <param name="Voter">compute, cacheSize or bandwidth.</param>
/// <param name="Vote">The vote.</param>
/// <param name="TargetWorkerCount">The instance count the voter wants, when it has a natural one.</param>
/// <param name="Reason">Why, in words, with the numbers.</param>
/// <param name="Metrics">The metrics it was computed from.</param>
public sealed record VoterResult(string Voter, ScaleVote Vote, int? TargetWorkerCount, string Reason, IReadOnlyDictionary<string, double> Metrics);

/// <summary>
/// A FaaSCache voter: a WebJobs scale monitor that can also say why it voted as it did. Each query samples the
/// voter's metrics afresh, so "since the last query" (the cache-size voter) means since the previous query of any reader.
/// </summary>
public interface IFaaSCacheVoter
{
    /// <summary>Gets the voter's name.</summary>
    string Name { get; }

    /// <summary>Samples the metrics and votes for an app that runs <paramref name="workerCount"/> instances.</summary>
    Task<VoterResult> VoteAsync(int workerCount);
}
