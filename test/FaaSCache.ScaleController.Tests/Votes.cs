namespace FaaSCache.ScaleController.Tests;

/// <summary>Builds instance vote reports for the decision tests.</summary>
internal static class Votes
{
    public static InstanceVotes Of(string instance, params (string Voter, int Vote, int? Target)[] votes) =>
        new(instance, [.. votes.Select(v => new VoterVote(v.Voter, v.Vote, v.Target, $"{v.Voter} says {v.Vote}"))], 0, DateTimeOffset.UnixEpoch);
}
