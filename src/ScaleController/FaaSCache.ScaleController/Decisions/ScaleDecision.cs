namespace FaaSCache.ScaleController.Decisions;

/// <summary>What started a decision.</summary>
public enum ScaleTrigger
{
    /// <summary>The periodic poll of the instances' votes.</summary>
    Poll,

    /// <summary>An unrequested (urgent) vote of one instance.</summary>
    Urgent,

    /// <summary>A request at the front door with no instance to serve it.</summary>
    FrontDoor,
}

/// <summary>One decision of the controller: the count it had, the count it wants, and why.</summary>
/// <param name="At">When it was made.</param>
/// <param name="Trigger">What started it.</param>
/// <param name="From">The instances running (or starting) then.</param>
/// <param name="To">The instances wanted.</param>
/// <param name="Reason">Why, in words, with the numbers and votes that decided it.</param>
public sealed record ScaleDecision(DateTimeOffset At, ScaleTrigger Trigger, int From, int To, string Reason)
{
    /// <summary>Gets a value indicating whether the decision changes the instance count.</summary>
    public bool Changes => From != To;
}

/// <summary>The answer to an urgent vote.</summary>
/// <param name="Accepted">False when refused (already at maxInstances).</param>
/// <param name="Decision">The decision made.</param>
public sealed record UrgentDecision(bool Accepted, ScaleDecision Decision);
