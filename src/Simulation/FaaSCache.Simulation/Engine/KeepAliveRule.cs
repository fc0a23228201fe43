namespace FaaSCache.Simulation.Engine;

/// <summary>When a replayed app is unloaded between invocations (and loaded again ahead of one).</summary>
public enum KeepAliveRule
{
    /// <summary>A fixed unload period (<see cref="PolicySet.UnloadAfterIdle"/>, else <see cref="SimulationOptions.UnloadAfterIdle"/>); loaded again by the next invocation.</summary>
    Fixed,

    /// <summary>
    /// The hybrid-histogram policy the scale controller runs (<c>--keep-alive histogram</c>, Faa$T §3.3): unloaded and
    /// loaded again ahead of the predicted next invocation, or kept for the histogram's keep-alive window.
    /// </summary>
    HybridHistogram,
}
