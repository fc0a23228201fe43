namespace FaaSCache.Prewarm;

/// <summary>
/// The hybrid-histogram policy's rules (Shahrad et al., ATC'20, as Faa$T §3.3 uses them): from an app's idle-time
/// histogram, how long after an idle period starts it is loaded again (pre-warm) and how long it is kept loaded then.
/// Pure: the scale controller's <c>HybridHistogramPolicy</c> applies them to live apps, the simulator to a replayed one.
/// </summary>
public static class HybridHistogramWindows
{
    /// <summary>The windows <paramref name="histogram"/> gives under <paramref name="options"/> (the reference's rules).</summary>
    /// <param name="histogram">The app's idle times.</param>
    /// <param name="options">The policy's settings.</param>
    /// <param name="explain">Whether to put the numbers in words into <see cref="KeepAliveWindows.Reason"/> (the controller's
    /// status shows them); the simulator, which asks at every invocation of every app, leaves them out.</param>
    public static KeepAliveWindows Compute(IdleTimeHistogram histogram, HybridHistogramOptions options, bool explain = true)
    {
        string Why(FormattableString reason) => explain ? Text(reason) : string.Empty;
        ArgumentNullException.ThrowIfNull(histogram);
        ArgumentNullException.ThrowIfNull(options);
        TimeSpan range = histogram.Range;
        if (histogram.Total < options.MinSamples)
        {
            return new(TimeSpan.Zero, range, WindowBasis.Fallback, Why($"{histogram.Total} idle time(s), fewer than {options.MinSamples}"));
        }

        double oobShare = (double)histogram.OutOfBounds / histogram.Total;
        if (oobShare >= options.OutOfBoundsShare && histogram.RecentOutOfBounds.Count > 0)
        {
            // ATC'20: pre-warm at 85% of the predicted idle time, keep alive for 2 x 15% of it.
            TimeSpan predicted = IdleTimePredictor.Predict(histogram.RecentOutOfBounds);
            return new(predicted * 0.85, predicted * 0.15 * 2, WindowBasis.Predictor, Why($"{oobShare * 100:0}% out of bounds; predicted next idle time {predicted.TotalSeconds:0.#} s"));
        }

        double cv = histogram.CoefficientOfVariation();
        if (cv < options.MinCoefficientOfVariation)
        {
            return new(TimeSpan.Zero, range, WindowBasis.Fallback, Why($"not representative: CV {cv:0.###} < {options.MinCoefficientOfVariation}"));
        }

        // Head: the lower edge of its bin; tail: the upper edge of its bin (both err towards being loaded).
        TimeSpan head = histogram.BinWidth * histogram.PercentileBin(options.HeadPercentile);
        TimeSpan tail = histogram.BinWidth * (histogram.PercentileBin(options.TailPercentile) + 1);
        TimeSpan preWarm = head * (1 - options.Margin);
        TimeSpan end = tail * (1 + options.Margin);
        return new(preWarm, end - preWarm, WindowBasis.Histogram, Why($"CV {cv:0.###}, head {head.TotalSeconds:0.#} s, tail {tail.TotalSeconds:0.#} s, {histogram.Total} idle times"));
    }

    private static string Text(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
