namespace FaaSCache.Simulation.Engine;

/// <summary>How apps are run in the simulation (the parts of the platform the trace does not record).</summary>
public sealed record SimulationOptions
{
    /// <summary>
    /// Gets how long an app stays loaded without invocations before it is unloaded (its cachelets snapshot and go):
    /// 10 minutes, the fixed keep-alive the hybrid histogram paper compares against.
    /// </summary>
    public TimeSpan UnloadAfterIdle { get; init; } = TimeSpan.FromMinutes(10);

    /// <summary>Gets the invocations one instance takes per minute; an app gets enough instances for its busiest minute.</summary>
    public double InvocationsPerInstancePerMinute { get; init; } = 60;

    /// <summary>Gets the most instances (cachelets) one app runs on.</summary>
    public int MaxInstances { get; init; } = 8;

    /// <summary>Gets a value indicating whether hits pay the <c>strong</c> preset's version check (the paper's simulation default).</summary>
    public bool StrongConsistency { get; init; } = true;

    /// <summary>Throws when a value is out of range, naming it.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A value is out of range.</exception>
    public void Validate()
    {
        if (UnloadAfterIdle <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(UnloadAfterIdle), UnloadAfterIdle, "UnloadAfterIdle must be positive.");
        }

        if (!(InvocationsPerInstancePerMinute > 0))
        {
            throw new ArgumentOutOfRangeException(nameof(InvocationsPerInstancePerMinute), InvocationsPerInstancePerMinute, "InvocationsPerInstancePerMinute must be positive.");
        }

        if (MaxInstances < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxInstances), MaxInstances, "MaxInstances must be at least 1.");
        }
    }
}
