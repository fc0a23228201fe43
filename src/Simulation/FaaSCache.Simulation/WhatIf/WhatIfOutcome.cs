namespace FaaSCache.Simulation.WhatIf;

/// <summary>One policy set's outcome on the app's log.</summary>
/// <param name="Policy">The policy set.</param>
/// <param name="Result">The replay's result (hit rate, mean latency, improvement over no cache).</param>
public sealed record WhatIfOutcome(PolicySet Policy, AppResult Result);
