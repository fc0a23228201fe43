namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Median latency as a function of object size from measured (size, p50) points: linear in size between points (a
/// fixed cost plus a transfer), flat below the smallest, and extended by the last segment's slope above the largest.
/// </summary>
public sealed class LatencyCurve
{
    private readonly long[] _sizes;
    private readonly double[] _micros;

    /// <summary>Builds the curve.</summary>
    /// <param name="points">Measured (size in bytes, median microseconds) points; at least one, distinct sizes.</param>
    /// <exception cref="ArgumentException">No points, or two points of the same size.</exception>
    public LatencyCurve(IEnumerable<(long SizeBytes, double Micros)> points)
    {
        ArgumentNullException.ThrowIfNull(points);
        var sorted = points.OrderBy(p => p.SizeBytes).ToArray();
        if (sorted.Length == 0)
        {
            throw new ArgumentException("A latency curve needs at least one measured point.", nameof(points));
        }

        for (int i = 1; i < sorted.Length; i++)
        {
            if (sorted[i].SizeBytes == sorted[i - 1].SizeBytes)
            {
                throw new ArgumentException($"Two measurements for size {sorted[i].SizeBytes}.", nameof(points));
            }
        }

        _sizes = sorted.Select(p => p.SizeBytes).ToArray();
        _micros = sorted.Select(p => p.Micros).ToArray();
    }

    /// <summary>Gets the measured sizes, ascending.</summary>
    public IReadOnlyList<long> Sizes => _sizes;

    /// <summary>The median latency for an object of <paramref name="sizeBytes"/>, in microseconds.</summary>
    /// <param name="sizeBytes">The object size.</param>
    /// <returns>Microseconds, never negative.</returns>
    public double Micros(long sizeBytes)
    {
        if (_sizes.Length == 1 || sizeBytes <= _sizes[0])
        {
            return _micros[0];
        }

        int hi = Array.BinarySearch(_sizes, sizeBytes);
        if (hi >= 0)
        {
            return _micros[hi];
        }

        hi = Math.Min(~hi, _sizes.Length - 1);
        int lo = hi - 1;
        double slope = (_micros[hi] - _micros[lo]) / (_sizes[hi] - _sizes[lo]);
        return Math.Max(0, _micros[lo] + (slope * (sizeBytes - _sizes[lo])));
    }
}
