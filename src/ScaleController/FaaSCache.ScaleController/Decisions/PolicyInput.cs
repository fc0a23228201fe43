namespace FaaSCache.ScaleController.Decisions;

/// <summary>What the policy decides from.</summary>
/// <param name="Current">Instances running or starting.</param>
/// <param name="Votes">The instances' votes, aggregated.</param>
/// <param name="LastRequest">When the front door last saw a request (null: never).</param>
/// <param name="PendingRequests">Requests held or in flight at the front door now.</param>
public sealed record PolicyInput(int Current, AggregatedVote Votes, DateTimeOffset? LastRequest, int PendingRequests);
