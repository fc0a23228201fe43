namespace FaaSCache.Simulation.Trace;

/// <summary>
/// Draws ranks 0..n-1 with probability about proportional to 1/(rank+1)^s by inverting the continuous approximation of
/// the Zipf CDF: constant time and memory however many blobs an app has.
/// </summary>
internal sealed class ZipfSampler
{
    private readonly long _n;
    private readonly double _oneMinusS;
    private readonly double _top;

    public ZipfSampler(long n, double s)
    {
        if (s is <= 0 or >= 1)
        {
            throw new ArgumentOutOfRangeException(nameof(s), s, "The Zipf exponent must be in (0, 1).");
        }

        _n = n;
        _oneMinusS = 1 - s;
        _top = Math.Pow(n + 1, _oneMinusS) - 1;
    }

    public long Next(Random random)
    {
        double x = Math.Pow((random.NextDouble() * _top) + 1, 1 / _oneMinusS) - 1;
        return Math.Clamp((long)x, 0, _n - 1);
    }
}
