namespace FaaSCache.ScaleController.Decisions;

/// <summary>What the policy decides from.</summary>
/// <param name="Current">Instances running or starting.</param>
/// <param name="Votes">The instances' votes, aggregated.</param>
/// <param name="LastRequest">When the front door last saw a request (null: never).</param>
/// <param name="PendingRequests">Requests held or in flight at the front door now.</param>
/// <param name="IdleSince">When the front door's last request ended with none left in flight (null: none yet); the hybrid histogram's idle start.</param>
public sealed record PolicyInput(int Current, AggregatedVote Votes, DateTimeOffset? LastRequest, int PendingRequests, DateTimeOffset? IdleSince = null);
