namespace FaaSCache.Simulation.Trace;

/// <summary>What <see cref="TraceGenerator"/> produces; checked by <see cref="TraceGeneratorOptionsValidator"/>.</summary>
public sealed record TraceGeneratorOptions
{
    /// <summary>Gets the seed: the same seed and options give the same trace, row for row.</summary>
    public int Seed { get; init; } = 1;

    /// <summary>Gets the number of accesses to generate (about; each app's count is rounded); the trace's 44.3 M by default.</summary>
    public long Accesses { get; init; } = AzureTraceShape.Accesses;

    /// <summary>Gets the number of apps; the trace's 855 by default.</summary>
    public int Apps { get; init; } = AzureTraceShape.Apps;

    /// <summary>Gets the days the trace spans.</summary>
    public int Days { get; init; } = AzureTraceShape.Days;

    /// <summary>
    /// Gets the most accesses one app may have: the simulator holds one app's accesses at a time, so this bounds its
    /// memory (~30 bytes an access plus its distinct names and ETags). The default, 8.2 M, lets the trace's busiest app
    /// touch its published 8,137,406 blobs (the notebook's maximum, cell 10); each needs an access.
    /// </summary>
    public int MaxAccessesPerApp { get; init; } = 8_200_000;
}
