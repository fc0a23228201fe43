namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The published statistics of the Azure Functions blob trace 2020 that the generator is fitted to: the paper (§2.1,
/// §6.3), the dataset's notes (<c>shared/reference/paper-numbers.md</c>) and the printed outputs and figures of the
/// dataset's own analysis notebook (AzurePublicDataset, <c>analysis/AzureFunctionsBlobDataset2020-Trace_Analysis.ipynb</c>;
/// "cell N" below is its N-th cell, from 0). A curve "read off" a figure was digitised from the notebook's stored PNG
/// (one pixel is ~6% in x on its log axes, ~0.4 points in y); printed numbers are used as printed. A blob is a blob
/// version (an ETag), as the notebook counts it.
/// </summary>
public static class AzureTraceShape
{
    /// <summary>Applications in the trace (§2.1; the notebook's shares are over 856).</summary>
    public const int Apps = 855;

    /// <summary>Blob accesses in the trace (rows of the dataset).</summary>
    public const long Accesses = 44_282_912;

    /// <summary>Invocations in the trace (§2.1).</summary>
    public const long Invocations = 33_100_000;

    /// <summary>Distinct blobs (versions) in the trace: §2.1's "20.3 million different objects", its first accesses.</summary>
    public const long Blobs = 20_300_000;

    /// <summary>Days the trace spans (November 23rd to December 7th 2020).</summary>
    public const int Days = 14;

    /// <summary>Share of accesses that are reads (§2.1).</summary>
    public const double ReadShare = 0.773;

    /// <summary>Regions in the trace.</summary>
    public const int Regions = 28;

    /// <summary>Users in the trace.</summary>
    public const int Users = 509;

    /// <summary>The median app's mean time between invocations, minutes (§6.3: "an average IaT of 20 minutes").</summary>
    public const double MedianAppMeanIatMinutes = 20;

    /// <summary>
    /// Share of apps invoked less than once a minute on average. §2.1 says it of functions ("80% of functions have less
    /// than one invocation per minute"); the trace has no function column, so we apply it to apps (ours).
    /// </summary>
    public const double AppsRarerThanOncePerMinute = 0.80;

    /// <summary>Start of the trace (Unix ms of 2020-11-23T00:00Z).</summary>
    public static readonly long StartUnixMs = new DateTimeOffset(2020, 11, 23, 0, 0, 0, TimeSpan.Zero).ToUnixTimeMilliseconds();

    /// <summary>
    /// Sizes of all blobs (versions): the notebook's printed percentiles (cell 9: p10 46 B, p25 542 B, p50 5,302 B,
    /// p75 9,240 B, p80 12,367 B, p90 26,764 B, p95 110,611 B, p99 1,589,532 B, max 1.91 GB). The generator draws from
    /// <see cref="ReadBlobBytes"/> and <see cref="WriteBlobBytes"/>; this curve is what their mix is checked against.
    /// </summary>
    public static QuantileCurve BlobBytes { get; } = new(
    [
        (0, 1), (0.10, 46), (0.25, 542), (0.50, 5_302), (0.75, 9_240), (0.80, 12_367), (0.90, 26_764), (0.95, 110_611),
        (0.99, 1_589_532), (0.9999, 12e6), (0.99999, 256e6), (1, 1.91e9),
    ]);

    /// <summary>
    /// Sizes of blobs first seen by a read. Cell 9's per-blob "Read" curve counts every version that was read, the
    /// written ones read back too, so it is not this; this is what the printed percentiles of all blobs
    /// (<see cref="BlobBytes"/>) leave once the written versions (<see cref="WriteBlobBytes"/>; 52.7% of the versions,
    /// as 22.7% writes of 44.3 M accesses over ~20 M versions make them) are taken out: at each printed size x,
    /// (All(x) - 0.527 Write(x)) / 0.473, held flat where that would fall (9.2 to 12.4 KB). The result is larger than
    /// the written ones, as §2.1 says ("the objects read tend to be larger"). The knots above p98.05 (10 MB at p99.9,
    /// 32 MB at p99.99, 256 MB at p99.999) are ours: a log-linear tail from 1.6 MB straight to the published 1.91 GB
    /// maximum would make the mean blob megabytes, where §2.1's 1.9 TB of unique data over 20.3 M blobs is 94 KB (these
    /// give a mean of ~170 KB for blobs first read, ~99 KB over all versions).
    /// </summary>
    public static QuantileCurve ReadBlobBytes { get; } = new(
    [
        (0, 46), (0.081, 542), (0.394, 5_302), (0.789, 9_240), (0.790, 12_367), (0.822, 26_764), (0.906, 110_611),
        (0.9805, 1_589_532), (0.999, 10e6), (0.9999, 32e6), (0.99999, 256e6), (1, 1.91e9),
    ]);

    /// <summary>
    /// Sizes of blob versions created by a write, read off cell 9's per-blob "Write" curve. The knots above p99.5
    /// (2 MB at p99.9, 100 MB at the top) are ours: the curve reaches 100% between 1 and 50 MB, too flat to read.
    /// </summary>
    public static QuantileCurve WriteBlobBytes { get; } = new(
    [
        (0, 1), (0.01, 2), (0.02, 8), (0.10, 8), (0.15, 16), (0.20, 61), (0.30, 61), (0.35, 276), (0.40, 536),
        (0.50, 980), (0.55, 1_680), (0.60, 5_950), (0.65, 6_320), (0.70, 9_070), (0.80, 10_230), (0.85, 18_660),
        (0.90, 18_660), (0.95, 22_350), (0.97, 26_770), (0.98, 46_000), (0.99, 113_400), (0.995, 297_000),
        (0.999, 2e6), (1, 100e6),
    ]);

    /// <summary>
    /// Invocations per app (the apps' CDF, cell 10's "Invocations" curve, read off): as (share of apps, count + 0.5)
    /// where the count is small, so that rounding a quantile gives the figure's steps (5.3% of apps are invoked once).
    /// Its top, above 96% of apps, cannot be read to better than a pixel; the generator scales it so the invocations sum
    /// to §2.1's 33.1 M.
    /// </summary>
    public static QuantileCurve InvocationsPerApp { get; } = new(
    [
        (0, 0.6), (0.053, 1.5), (0.089, 2.5), (0.118, 3.5), (0.142, 4.5), (0.152, 5.5), (0.175, 6.6), (0.203, 7.8),
        (0.24, 9.3), (0.264, 11), (0.309, 13), (0.335, 15.5), (0.362, 18.4), (0.376, 21.8), (0.396, 25.8), (0.425, 30.6),
        (0.459, 36.3), (0.486, 43.1), (0.516, 51.1), (0.539, 60.7), (0.561, 72), (0.573, 85), (0.585, 101), (0.60, 120),
        (0.61, 142), (0.622, 169), (0.636, 200), (0.656, 238), (0.667, 282), (0.677, 335), (0.691, 397), (0.703, 471),
        (0.711, 559), (0.722, 663), (0.736, 786), (0.744, 933), (0.752, 1_107), (0.762, 1_313), (0.776, 1_557),
        (0.785, 2_320), (0.799, 2_752), (0.809, 3_264), (0.823, 3_872), (0.837, 4_594), (0.845, 5_449), (0.854, 6_464),
        (0.864, 7_668), (0.876, 9_096), (0.89, 10_790), (0.902, 12_800), (0.906, 19_067), (0.911, 22_619),
        (0.915, 28_403), (0.919, 33_693), (0.935, 39_969), (0.943, 47_413), (0.947, 56_244), (0.951, 66_719),
        (0.955, 79_146), (0.959, 93_887), (0.963, 132_117), (0.967, 156_723), (0.971, 185_913), (0.98, 261_616),
        (0.984, 548_398), (0.988, 915_432), (0.992, 1_149_551), (1, 1.8e6),
    ]);

    /// <summary>Where <see cref="InvocationsPerApp"/>'s top (scaled to reach the published total) begins.</summary>
    public const double InvocationsTopFrom = 0.96;

    /// <summary>
    /// Distinct blobs (ETags) per app (cell 10's "Blobs" curve, read off, as (share, count + 0.5) where small), through
    /// the printed points: one blob 11.80%, at most 100 66.12%, at most 10,000 92.99%, the most 8,137,406. The figure
    /// shows that one app alone is above ~1.6 M; the knot at 1.7 M (p99.88, the last app but one) is ours, on that.
    /// </summary>
    public static QuantileCurve BlobsPerApp { get; } = new(
    [
        (0, 0.6), (0.118, 1.5), (0.199, 2.5), (0.231, 3.5), (0.276, 4.5), (0.289, 5.2), (0.309, 6.2), (0.317, 7.4),
        (0.35, 8.8), (0.392, 10.4), (0.421, 12.3), (0.447, 14.6), (0.478, 17.3), (0.50, 20.6), (0.528, 24.4),
        (0.559, 28.9), (0.575, 34.3), (0.587, 40.7), (0.598, 48.3), (0.616, 57.3), (0.64, 68), (0.654, 80.7),
        (0.6612, 100.5), (0.673, 113), (0.685, 135), (0.699, 160), (0.711, 189), (0.726, 225), (0.74, 267), (0.748, 316),
        (0.758, 375), (0.77, 445), (0.782, 528), (0.793, 626), (0.807, 743), (0.817, 881), (0.825, 1_045),
        (0.833, 1_240), (0.839, 1_471), (0.85, 1_745), (0.852, 2_070), (0.858, 2_456), (0.87, 2_913), (0.884, 3_456),
        (0.898, 4_099), (0.902, 4_863), (0.909, 5_768), (0.919, 6_843), (0.927, 8_117), (0.9299, 10_000.5),
        (0.939, 11_422), (0.943, 13_550), (0.947, 17_015), (0.951, 20_184), (0.955, 30_067), (0.961, 35_667),
        (0.963, 42_310), (0.967, 50_191), (0.972, 59_539), (0.976, 74_766), (0.98, 111_373), (0.984, 140_000),
        (0.986, 196_805), (0.992, 247_137), (0.996, 1.62e6), (0.9988, 1.7e6), (1, 8_137_406),
    ]);

    /// <summary>Fig. 2 / cell 10, printed: apps with fewer than one invocation per blob, 10.98%.</summary>
    public const double AppsBelowOneInvocationPerBlob = 0.1098;

    /// <summary>Fig. 2 / cell 10, printed: apps with at most one invocation per blob, 50.12%.</summary>
    public const double AppsAtMostOneInvocationPerBlob = 0.5012;

    /// <summary>Fig. 2 / cell 10, printed: apps with at most 1.1 invocations per blob, 68.11%.</summary>
    public const double AppsAtMostOnePointOneInvocationsPerBlob = 0.6811;

    /// <summary>Fig. 2's curve below one invocation per blob, read off, over its own share of apps (0..1).</summary>
    public static QuantileCurve InvocationsPerBlobBelowOne { get; } = new(
    [
        (0, 0.03), (0.073, 0.05), (0.109, 0.24), (0.146, 0.29), (0.219, 0.34), (0.301, 0.43), (0.556, 0.51),
        (0.701, 0.60), (0.774, 0.72), (0.856, 0.85), (1, 0.999),
    ]);

    /// <summary>
    /// Fig. 2's curve above 1.1 invocations per blob (read off, and the printed 92.29% at most 100), as (share of all
    /// apps, invocations per blob) from 68.11%.
    /// </summary>
    public static IReadOnlyList<(double P, double Value)> InvocationsPerBlobAboveOnePointOne { get; } =
    [
        (0.6811, 1.1), (0.701, 1.19), (0.728, 1.42), (0.746, 1.68), (0.782, 2.0), (0.799, 2.36), (0.807, 2.8),
        (0.817, 3.3), (0.827, 3.95), (0.837, 4.7), (0.845, 5.55), (0.856, 6.6), (0.864, 7.8), (0.87, 9.3), (0.874, 11),
        (0.89, 13), (0.894, 20.6), (0.898, 30.6), (0.909, 36.3), (0.911, 43), (0.919, 51), (0.9229, 100), (0.927, 150),
        (0.931, 700), (0.935, 881), (0.939, 1_240), (0.943, 1_471), (0.947, 4_339), (0.955, 5_148), (0.959, 9_096),
        (0.963, 12_800), (0.967, 15_184), (0.97, 18_012), (0.976, 21_367), (0.98, 25_346), (0.984, 39_969),
        (0.988, 47_413), (0.992, 56_244), (0.996, 66_719), (1, 118_000),
    ];

    /// <summary>Invocations per blob at share <paramref name="p"/> of the apps (Fig. 2's quantile function).</summary>
    /// <param name="p">A share of apps, 0..1.</param>
    /// <returns>Invocations per distinct blob: below 1, exactly 1, in (1, 1.1], or above.</returns>
    public static double InvocationsPerBlob(double p)
    {
        if (p < AppsBelowOneInvocationPerBlob)
        {
            return InvocationsPerBlobBelowOne.Quantile(p / AppsBelowOneInvocationPerBlob);
        }

        if (p < AppsAtMostOneInvocationPerBlob)
        {
            return 1;
        }

        if (p < AppsAtMostOnePointOneInvocationsPerBlob)
        {
            // Ours: the figure cannot show how the 18% of apps spread over (1, 1.1]; evenly.
            return 1 + (0.1 * (p - AppsAtMostOneInvocationPerBlob) / (AppsAtMostOnePointOneInvocationsPerBlob - AppsAtMostOneInvocationPerBlob)) + 1e-6;
        }

        return AboveOnePointOne.Quantile((p - AppsAtMostOnePointOneInvocationsPerBlob) / (1 - AppsAtMostOnePointOneInvocationsPerBlob));
    }

    private static readonly QuantileCurve AboveOnePointOne = new(
        [.. InvocationsPerBlobAboveOnePointOne.Select(k => ((k.P - AppsAtMostOnePointOneInvocationsPerBlob) / (1 - AppsAtMostOnePointOneInvocationsPerBlob), k.Value))]);
}
