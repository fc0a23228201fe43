namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The published statistics of the Azure Functions blob trace 2020 (paper §2.1 and the dataset's notes, collected in
/// <c>shared/reference/paper-numbers.md</c>) that the generator is calibrated to.
/// </summary>
public static class AzureTraceShape
{
    /// <summary>Applications in the trace.</summary>
    public const int Apps = 855;

    /// <summary>Blob accesses in the trace.</summary>
    public const long Accesses = 44_282_912;

    /// <summary>Invocations in the trace.</summary>
    public const long Invocations = 33_100_000;

    /// <summary>Days the trace spans (November 23rd to December 7th 2020).</summary>
    public const int Days = 14;

    /// <summary>Share of accesses that are reads.</summary>
    public const double ReadShare = 0.773;

    /// <summary>Regions in the trace.</summary>
    public const int Regions = 28;

    /// <summary>Users in the trace.</summary>
    public const int Users = 509;

    /// <summary>Start of the trace (Unix ms of 2020-11-23T00:00Z).</summary>
    public static readonly long StartUnixMs = new DateTimeOffset(2020, 11, 23, 0, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds();

    /// <summary>
    /// Blob sizes: the published percentiles p10 46 B, p25 542 B, p50 5.3 KB, p75 9.2 KB, p90 26.8 KB, p95 111 KB,
    /// p99 1.59 MB, max 1.91 GB. Two knots above p99 (12 MB at p99.99, 256 MB at p99.999) are ours: a log-uniform tail
    /// from 1.59 MB straight to 1.91 GB would make the mean blob ~2 MB, where the trace's 1.9 TB of unique data over
    /// 20.3 M blobs is 94 KB (these knots give about 93 KB).
    /// </summary>
    public static QuantileCurve BlobBytes { get; } = new(
    [
        (0, 1), (0.10, 46), (0.25, 542), (0.50, 5.3e3), (0.75, 9.2e3), (0.90, 26.8e3), (0.95, 111e3), (0.99, 1.59e6),
        (0.9999, 12e6), (0.99999, 256e6), (1, 1.91e9),
    ]);

    /// <summary>
    /// Invocations per distinct blob of an app (paper §2.1, Fig. 2): "roughly 11.0% of applications access more than one
    /// blob per invocation" (below 1), "most applications access a single, different blob per invocation" (exactly 1),
    /// "more than 32.0% ... access the same blob in more than one invocation and 7.7% in more than 100 invocations", one
    /// in more than 10,000. Apps at or below 1 use each blob in one invocation only; above 1 they pick blobs by
    /// popularity. The 0th knot (0.05: twenty blobs per invocation) is ours. (Fig. 2's curve, read off the figure, puts
    /// 50.1% of apps at or below 1; in a trace of blob-accessing invocations that would make 49.9% reuse a blob, not 32%:
    /// the text's figure is kept.)
    /// </summary>
    public static QuantileCurve InvocationsPerBlob { get; } = new([(0, 0.05), (0.11, 1), (0.68, 1), (0.923, 100), (1, 20_000)]);

    /// <summary>
    /// How strongly an app's reuse follows its size: the weight of its place among the apps by accesses, against an even
    /// spread, in its place on <see cref="InvocationsPerBlob"/>. Ours, set so that the first accesses are the published
    /// share: 20.3 M first accesses with 33.1 M invocations is 0.61 new blobs per invocation, while an app that never
    /// reuses has at least one per invocation, so the busy apps must be the reusing ones more often than not.
    /// </summary>
    public const double ReuseBySize = 0.25;

    /// <summary>
    /// Accesses per invocation: 44.3 M accesses over 33.1 M invocations is 1.34 on average; the split over 1..4 is ours.
    /// </summary>
    public static IReadOnlyList<double> AccessesPerInvocationWeights { get; } = [0.75, 0.17, 0.06, 0.02];

    /// <summary>
    /// Spread (sigma of a log-normal) of accesses per app, chosen so that about 80% of apps are invoked less than once
    /// a minute (paper §2.1) at the trace's mean of 52 K accesses per app.
    /// </summary>
    public const double AppSizeSigma = 2.3;
}
