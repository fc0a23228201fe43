namespace FaaSCache.Simulation.Trace;

/// <summary>
/// A distribution given by published percentiles: the quantile function interpolates linearly in log space between
/// the knots, so that sampling it with a uniform number reproduces every published percentile exactly.
/// </summary>
public sealed class QuantileCurve
{
    private readonly double[] _p;
    private readonly double[] _logValue;

    /// <summary>Builds the curve from (probability, value) knots.</summary>
    /// <param name="knots">Knots with strictly increasing probabilities from 0 to 1 and positive, non-decreasing values.</param>
    /// <exception cref="ArgumentException">The knots do not start at 0, end at 1, increase, or hold a non-positive value.</exception>
    public QuantileCurve(IReadOnlyList<(double P, double Value)> knots)
    {
        ArgumentNullException.ThrowIfNull(knots);
        if (knots.Count < 2 || knots[0].P != 0 || knots[^1].P != 1)
        {
            throw new ArgumentException("Quantile knots must run from probability 0 to probability 1.", nameof(knots));
        }

        _p = new double[knots.Count];
        _logValue = new double[knots.Count];
        for (int i = 0; i < knots.Count; i++)
        {
            if (knots[i].Value <= 0 || (i > 0 && (knots[i].P <= knots[i - 1].P || knots[i].Value < knots[i - 1].Value)))
            {
                throw new ArgumentException($"Knot {i} ({knots[i].P}, {knots[i].Value}) must be positive and increase on the previous one.", nameof(knots));
            }

            _p[i] = knots[i].P;
            _logValue[i] = Math.Log(knots[i].Value);
        }
    }

    /// <summary>The value at probability <paramref name="u"/> (clamped to [0, 1]).</summary>
    /// <param name="u">A probability.</param>
    /// <returns>The quantile.</returns>
    public double Quantile(double u)
    {
        u = Math.Clamp(u, 0, 1);
        int i = Array.BinarySearch(_p, u);
        if (i >= 0)
        {
            return Math.Exp(_logValue[i]);
        }

        int hi = ~i;
        int lo = hi - 1;
        double t = (u - _p[lo]) / (_p[hi] - _p[lo]);
        return Math.Exp(_logValue[lo] + (t * (_logValue[hi] - _logValue[lo])));
    }
}
