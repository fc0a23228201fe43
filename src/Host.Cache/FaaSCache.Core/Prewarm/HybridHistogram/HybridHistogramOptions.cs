namespace FaaSCache.Prewarm;

/// <summary>
/// The hybrid-histogram policy's settings (Shahrad et al., ATC'20; Faa$T §3.3). The defaults are the paper's: 240 bins of
/// one minute (a 4-hour range), head 5th / tail 99th percentile, a 10% margin, representative when the bin counts'
/// coefficient of variation is at least 2, the time-series branch when half the idle times are out of bounds.
/// Checked by <see cref="HybridHistogramOptionsValidator"/>.
/// </summary>
public sealed class HybridHistogramOptions
{
    /// <summary>Gets or sets the width of one bin (the paper: one minute; tests shorten it).</summary>
    public TimeSpan BinWidth { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>Gets or sets the number of bins (the paper: 240, a 4-hour range); idle times beyond count as out of bounds.</summary>
    public int Bins { get; set; } = 240;

    /// <summary>Gets or sets the fewest idle times the histogram needs before it is trusted.</summary>
    public int MinSamples { get; set; } = 10;

    /// <summary>Gets or sets the head percentile (pre-warm), 0..1.</summary>
    public double HeadPercentile { get; set; } = 0.05;

    /// <summary>Gets or sets the tail percentile (keep-alive), 0..1.</summary>
    public double TailPercentile { get; set; } = 0.99;

    /// <summary>Gets or sets the margin: the head shrinks and the tail grows by it.</summary>
    public double Margin { get; set; } = 0.10;

    /// <summary>Gets or sets the least coefficient of variation of the bin counts for the histogram to be representative.</summary>
    public double MinCoefficientOfVariation { get; set; } = 2.0;

    /// <summary>Gets or sets the share of out-of-bounds idle times from which the time-series predictor decides.</summary>
    public double OutOfBoundsShare { get; set; } = 0.5;

    /// <summary>Gets the histogram's range (bins x width): also the fallback keep-alive.</summary>
    public TimeSpan Range => BinWidth * Bins;
}
