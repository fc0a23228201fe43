namespace FaaSCache.Prewarm;

/// <summary>Checks <see cref="HybridHistogramOptions"/>: each bad value gives one error naming the key, the value and what is allowed.</summary>
public sealed class HybridHistogramOptionsValidator : OptionsValidator<HybridHistogramOptions>
{
    /// <summary>The most bins (the state stores one 16-bit count per bin and is meant to stay about 1 KB).</summary>
    public const int MaxBins = 1024;

    /// <inheritdoc />
    protected override void Check(HybridHistogramOptions options, List<string> failures)
    {
        if (options.BinWidth < TimeSpan.FromMilliseconds(100))
        {
            failures.Add(Invariant($"Histogram.BinWidth {options.BinWidth.TotalSeconds} s must be at least 0.1 s (the paper: 60 s)."));
        }

        if (options.Bins is < 2 or > MaxBins)
        {
            failures.Add(Invariant($"Histogram.Bins {options.Bins} must be between 2 and {MaxBins} (the paper: 240)."));
        }

        if (options.MinSamples < 1)
        {
            failures.Add(Invariant($"Histogram.MinSamples {options.MinSamples} must be at least 1."));
        }

        Fraction(failures, "Histogram.HeadPercentile", options.HeadPercentile);
        Fraction(failures, "Histogram.TailPercentile", options.TailPercentile);
        if (options.HeadPercentile > options.TailPercentile)
        {
            failures.Add(Invariant($"Histogram.HeadPercentile {options.HeadPercentile} must not exceed Histogram.TailPercentile {options.TailPercentile}."));
        }

        if (options.Margin is < 0 or >= 1 || double.IsNaN(options.Margin))
        {
            failures.Add(Invariant($"Histogram.Margin {options.Margin} must be in [0, 1) (the paper: 0.1)."));
        }

        if (options.MinCoefficientOfVariation < 0 || double.IsNaN(options.MinCoefficientOfVariation))
        {
            failures.Add(Invariant($"Histogram.MinCoefficientOfVariation {options.MinCoefficientOfVariation} must be zero or more (the paper: 2)."));
        }

        Fraction(failures, "Histogram.OutOfBoundsShare", options.OutOfBoundsShare);
    }

    private static void Fraction(List<string> failures, string key, double value)
    {
        if (value is <= 0 or > 1 || double.IsNaN(value))
        {
            failures.Add(Invariant($"{key} {value} must be in (0, 1]."));
        }
    }
}
