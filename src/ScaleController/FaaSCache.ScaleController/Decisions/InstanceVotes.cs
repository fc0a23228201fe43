namespace FaaSCache.ScaleController.Decisions;

/// <summary>One voter's vote as an instance reported it (Scale.proto's <c>Vote</c>).</summary>
/// <param name="Voter">compute, cacheSize or bandwidth.</param>
/// <param name="Vote">-1 scale in, 0 none, +1 scale out.</param>
/// <param name="TargetWorkerCount">The voter's target instance count, when it has one.</param>
/// <param name="Reason">Why, in words.</param>
public sealed record VoterVote(string Voter, int Vote, int? TargetWorkerCount, string Reason);

/// <summary>What one instance answered to a poll: its votes and its in-flight invocations.</summary>
/// <param name="InstanceId">The instance.</param>
/// <param name="Votes">One vote per enabled voter.</param>
/// <param name="InFlight">Invocations executing on the instance now.</param>
/// <param name="At">When the answer arrived.</param>
public sealed record InstanceVotes(string InstanceId, IReadOnlyList<VoterVote> Votes, int InFlight, DateTimeOffset At);
