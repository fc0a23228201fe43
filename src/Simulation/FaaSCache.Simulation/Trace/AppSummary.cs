namespace FaaSCache.Simulation.Trace;

/// <summary>One app of a trace as the notebook's cell 10 and §6.3 count it.</summary>
/// <param name="App">The app's name.</param>
/// <param name="Invocations">Distinct invocations.</param>
/// <param name="Blobs">Distinct ETags (blob versions).</param>
/// <param name="Accesses">Rows (with a size).</param>
/// <param name="Writes">Rows that write.</param>
/// <param name="MeanIatMs">Mean time between its invocations' first rows, ms (NaN with one invocation).</param>
/// <param name="IatCov">Coefficient of variation of those times (sample standard deviation over mean; NaN under three invocations).</param>
public readonly record struct AppSummary(string App, long Invocations, long Blobs, long Accesses, long Writes, double MeanIatMs, double IatCov)
{
    /// <summary>Gets invocations per distinct blob (Fig. 2's ratio).</summary>
    public double InvocationsPerBlob => (double)Invocations / Blobs;
}
