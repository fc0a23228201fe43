namespace FaaSCache.Simulation.Trace;

/// <summary>What <see cref="TraceGenerator"/> generates for one app: its counts, fixed before any row is written.</summary>
/// <param name="App">The app's index.</param>
/// <param name="Invocations">Distinct invocations.</param>
/// <param name="Blobs">Distinct blob versions (ETags) its accesses touch.</param>
/// <param name="Accesses">Rows.</param>
/// <param name="Writes">Rows that write (each creates a new version).</param>
/// <param name="StartMs">Its first invocation, ms after the trace's start.</param>
/// <param name="SpanMs">From its first invocation to its last, ms (its mean time between invocations times invocations - 1).</param>
public readonly record struct AppPlan(int App, long Invocations, long Blobs, long Accesses, long Writes, double StartMs, double SpanMs)
{
    /// <summary>Gets the app's invocations per distinct blob (Fig. 2's ratio).</summary>
    public double InvocationsPerBlob => (double)Invocations / Blobs;

    /// <summary>Gets the app's mean time between invocations, ms (NaN with one invocation).</summary>
    public double MeanIatMs => Invocations > 1 ? SpanMs / (Invocations - 1) : double.NaN;
}
