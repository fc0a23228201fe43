namespace FaaSCache.Prewarm;

/// <summary>Checks <see cref="HybridHistogramOptions"/>: each bad value gives one error naming the key, the value and what is allowed.</summary>
public sealed class HybridHistogramOptionsValidator : IValidateOptions<HybridHistogramOptions>
{
    /// <summary>The most bins (the state stores one 16-bit count per bin and is meant to stay about 1 KB).</summary>
    public const int MaxBins = 1024;

    /// <inheritdoc />
    public ValidateOptionsResult Validate(string? name, HybridHistogramOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var errors = new List<string>();
        if (options.BinWidth < TimeSpan.FromMilliseconds(100))
        {
            errors.Add(Invariant($"Histogram.BinWidth {options.BinWidth.TotalSeconds} s must be at least 0.1 s (the paper: 60 s)."));
        }

        if (options.Bins is < 2 or > MaxBins)
        {
            errors.Add(Invariant($"Histogram.Bins {options.Bins} must be between 2 and {MaxBins} (the paper: 240)."));
        }

        if (options.MinSamples < 1)
        {
            errors.Add(Invariant($"Histogram.MinSamples {options.MinSamples} must be at least 1."));
        }

        Fraction(errors, "Histogram.HeadPercentile", options.HeadPercentile);
        Fraction(errors, "Histogram.TailPercentile", options.TailPercentile);
        if (options.HeadPercentile > options.TailPercentile)
        {
            errors.Add(Invariant($"Histogram.HeadPercentile {options.HeadPercentile} must not exceed Histogram.TailPercentile {options.TailPercentile}."));
        }

        if (options.Margin is < 0 or >= 1 || double.IsNaN(options.Margin))
        {
            errors.Add(Invariant($"Histogram.Margin {options.Margin} must be in [0, 1) (the paper: 0.1)."));
        }

        if (options.MinCoefficientOfVariation < 0 || double.IsNaN(options.MinCoefficientOfVariation))
        {
            errors.Add(Invariant($"Histogram.MinCoefficientOfVariation {options.MinCoefficientOfVariation} must be zero or more (the paper: 2)."));
        }

        Fraction(errors, "Histogram.OutOfBoundsShare", options.OutOfBoundsShare);
        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }

    private static void Fraction(List<string> errors, string key, double value)
    {
        if (value is <= 0 or > 1 || double.IsNaN(value))
        {
            errors.Add(Invariant($"{key} {value} must be in (0, 1]."));
        }
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
