namespace FaaSCache.ScaleController.Decisions;

/// <summary>Which way the votes of all instances point.</summary>
public enum ScaleDirection
{
    /// <summary>Every vote of every instance is in.</summary>
    In = -1,

    /// <summary>No vote out and not every vote in (or no votes).</summary>
    None = 0,

    /// <summary>At least one vote is out.</summary>
    Out = 1,
}

/// <summary>The votes of all instances combined by the WebJobs SDK's rule.</summary>
/// <param name="Direction">Out if any vote is out, in only if all are.</param>
/// <param name="Target">The instance count the votes ask for (out: the largest target of an out-voter, else current + 1; in: current - 1; none: current).</param>
/// <param name="Reason">The deciding votes, in words.</param>
public sealed record AggregatedVote(ScaleDirection Direction, int Target, string Reason);
