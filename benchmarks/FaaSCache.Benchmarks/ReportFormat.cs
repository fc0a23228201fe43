namespace FaaSCache.Benchmarks;

/// <summary>Number formats and size labels shared by the benchmarks' tables (the run's facts: <see cref="FaaSCache.Testing.MachineLoad"/>, <see cref="FaaSCache.Testing.AzuriteServer.InstalledVersion"/>).</summary>
internal static class ReportFormat
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>1 KB, 64 KB, 1 MB, 128 MB (binary units, as the sizes are powers of two).</summary>
    public static string SizeLabel(long size) => size >= 1L << 20
        ? string.Create(Invariant, $"{size >> 20} MB")
        : string.Create(Invariant, $"{size >> 10} KB");

    /// <summary>A latency with about three significant digits: 0.14, 12.3, 5,157.</summary>
    public static string Latency(double value) => value switch
    {
        < 10 => value.ToString("0.00", Invariant),
        < 100 => value.ToString("0.0", Invariant),
        _ => value.ToString("#,0", Invariant),
    };

    /// <summary>A ratio with about three significant digits and an x: 0.97x, 20.3x, 1,310x.</summary>
    public static string Ratio(double ratio) => ratio switch
    {
        double.NaN => "-",
        < 10 => ratio.ToString("0.00", Invariant) + "x",
        < 100 => ratio.ToString("0.0", Invariant) + "x",
        _ => ratio.ToString("#,0", Invariant) + "x",
    };

    /// <summary>How much faster <paramref name="ms"/> is than <paramref name="baseline"/>, in percent of the baseline: 61%.</summary>
    public static string Faster(double ms, double baseline) => ((baseline - ms) / baseline).ToString("P0", Invariant);

    /// <summary>A count with thousands separators.</summary>
    public static string Count(long n) => n.ToString("#,0", Invariant);
}
