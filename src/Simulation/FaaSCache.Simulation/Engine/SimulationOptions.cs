namespace FaaSCache.Simulation.Engine;

/// <summary>How apps are run in the simulation (the parts of the platform the trace does not record); checked by <see cref="SimulationOptionsValidator"/>.</summary>
public sealed record SimulationOptions
{
    /// <summary>
    /// Gets how long an app stays loaded without invocations before it is unloaded (its cachelets snapshot and go):
    /// 10 minutes, the fixed keep-alive the hybrid histogram paper compares against.
    /// </summary>
    public TimeSpan UnloadAfterIdle { get; init; } = TimeSpan.FromMinutes(10);

    /// <summary>Gets the hybrid histogram's settings for policy sets that keep apps alive by it (the scale controller's defaults: the paper's).</summary>
    public HybridHistogramOptions HybridHistogram { get; init; } = new();

    /// <summary>Gets the most instances (cachelets) one app runs on: the scale controller's <c>--max-instances</c>.</summary>
    public int MaxInstances { get; init; } = 8;

    /// <summary>Gets how often the controller asks every instance for its votes (the scale controller's <c>--poll-interval</c> default).</summary>
    public TimeSpan PollInterval { get; init; } = TimeSpan.FromSeconds(2);

    /// <summary>Gets the least time between two scale-outs (the scale controller's <c>--scale-out-cooldown</c> default).</summary>
    public TimeSpan ScaleOutCooldown { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Gets the least time after any change before a scale-in (the scale controller's <c>--scale-in-cooldown</c> default).</summary>
    public TimeSpan ScaleInCooldown { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>Gets host.json's <c>scaling</c> section the voters read (which voters are on, their targets).</summary>
    public ScalingOptions Scaling { get; init; } = new();

    /// <summary>
    /// Gets what a scaled load and a new instance cost: BW_BS, BW_Inst and the first bytes for the bandwidth planner, and
    /// T_Load, after which an instance the controller starts joins (<see cref="TransferLinks"/> reads measured ones). Null
    /// (e.g. <c>faascache what-if</c>, which reads no scaling results): the planner never splits a miss and a new instance
    /// joins at once.
    /// </summary>
    public TransferProfile? Transfer { get; init; }

    /// <summary>Gets a value indicating whether hits pay the <c>strong</c> preset's version check (the paper's simulation default).</summary>
    public bool StrongConsistency { get; init; } = true;
}
