namespace FaaSCache.Benchmarks;

/// <summary>Stopwatch-tick latencies of one path, summarised as nearest-rank percentiles in microseconds or milliseconds.</summary>
internal sealed class LatencySamples(int capacity)
{
    private readonly List<long> _ticks = new(capacity);

    public int Count => _ticks.Count;

    public void Add(long ticks) => _ticks.Add(ticks);

    /// <summary>The nearest-rank percentile (<paramref name="percent"/> in 0..100) in microseconds.</summary>
    public double PercentileMicroseconds(double percent)
    {
        if (_ticks.Count == 0)
        {
            throw new InvalidOperationException("No samples were taken.");
        }

        return ToMicroseconds(NearestRank(_ticks, percent));
    }

    /// <summary>The nearest-rank percentile (<paramref name="percent"/> in 0..100) in milliseconds.</summary>
    public double PercentileMilliseconds(double percent) => PercentileMicroseconds(percent) / 1000;

    public static double ToMicroseconds(long ticks) => ticks * 1_000_000.0 / Stopwatch.Frequency;

    /// <summary>The nearest-rank percentile of any values (<paramref name="percent"/> in 0..100); the values are not changed.</summary>
    public static T NearestRank<T>(IReadOnlyCollection<T> values, double percent)
    {
        if (values.Count == 0)
        {
            throw new InvalidOperationException("No samples were taken.");
        }

        var sorted = values.ToArray();
        Array.Sort(sorted);
        int rank = (int)Math.Ceiling(percent / 100 * sorted.Length);
        return sorted[Math.Clamp(rank - 1, 0, sorted.Length - 1)];
    }
}
