namespace FaaSCache.Prewarm;

/// <summary>
/// One app's idle times (ATC'20's hybrid histogram, Faa$T §3.3): a 16-bit count per bin (1 minute x 240 by default),
/// the out-of-bounds count, and the last few out-of-bounds idle times for the time-series predictor. Small on purpose
/// (the paper: ~960 bytes per app): when a bin would overflow, every count is halved, which keeps the shape and ages
/// old idle times. Not thread-safe.
/// </summary>
public sealed class IdleTimeHistogram
{
    /// <summary>How many out-of-bounds idle times are kept for the predictor.</summary>
    public const int RecentOutOfBoundsKept = 8;

    private readonly ushort[] _bins;
    private readonly List<TimeSpan> _recentOutOfBounds = [];

    /// <summary>Initializes a new instance of the <see cref="IdleTimeHistogram"/> class, empty.</summary>
    public IdleTimeHistogram(TimeSpan binWidth, int bins)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(binWidth, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThan(bins, 1);
        BinWidth = binWidth;
        _bins = new ushort[bins];
    }

    /// <summary>Gets the width of one bin.</summary>
    public TimeSpan BinWidth { get; }

    /// <summary>Gets the covered range (bins x width); longer idle times are out of bounds.</summary>
    public TimeSpan Range => BinWidth * _bins.Length;

    /// <summary>Gets the counts per bin (bin i: idle times in [i, i+1) x width).</summary>
    public ReadOnlySpan<ushort> Counts => _bins;

    /// <summary>Gets the number of out-of-bounds idle times.</summary>
    public int OutOfBounds { get; private set; }

    /// <summary>Gets the number of idle times in range.</summary>
    public int InRange { get; private set; }

    /// <summary>Gets every idle time counted (in range and out of bounds).</summary>
    public int Total => InRange + OutOfBounds;

    /// <summary>Gets the last out-of-bounds idle times, oldest first (at most <see cref="RecentOutOfBoundsKept"/>).</summary>
    public IReadOnlyList<TimeSpan> RecentOutOfBounds => _recentOutOfBounds;

    /// <summary>Counts one idle time.</summary>
    public void Add(TimeSpan idle)
    {
        if (idle < TimeSpan.Zero)
        {
            idle = TimeSpan.Zero;
        }

        long bin = idle.Ticks / BinWidth.Ticks;
        if (bin >= _bins.Length)
        {
            if (OutOfBounds == ushort.MaxValue)
            {
                Halve();
            }

            OutOfBounds++;
            _recentOutOfBounds.Add(idle);
            if (_recentOutOfBounds.Count > RecentOutOfBoundsKept)
            {
                _recentOutOfBounds.RemoveAt(0);
            }

            return;
        }

        if (_bins[bin] == ushort.MaxValue)
        {
            Halve();
        }

        _bins[bin]++;
        InRange++;
    }

    /// <summary>
    /// The bin holding the <paramref name="percentile"/> (0..1] of the in-range idle times: the smallest bin whose
    /// cumulative count reaches ceil(p x n) (at least 1). Throws when no idle time is in range.
    /// </summary>
    public int PercentileBin(double percentile)
    {
        if (InRange == 0)
        {
            throw new InvalidOperationException("No idle time in range: no percentile.");
        }

        long rank = Math.Max(1, (long)Math.Ceiling(percentile * InRange));
        long cumulative = 0;
        for (int i = 0; i < _bins.Length; i++)
        {
            cumulative += _bins[i];
            if (cumulative >= rank)
            {
                return i;
            }
        }

        return _bins.Length - 1;
    }

    /// <summary>The coefficient of variation (population standard deviation / mean) of the bin counts; 0 when empty.</summary>
    public double CoefficientOfVariation()
    {
        if (InRange == 0)
        {
            return 0;
        }

        double mean = (double)InRange / _bins.Length;
        double squares = 0;
        foreach (ushort count in _bins)
        {
            squares += (count - mean) * (count - mean);
        }

        return Math.Sqrt(squares / _bins.Length) / mean;
    }

    /// <summary>Replaces the contents (a loaded state); the counts must fit the bins.</summary>
    public void Restore(ReadOnlySpan<ushort> counts, int outOfBounds, IEnumerable<TimeSpan> recentOutOfBounds)
    {
        ArgumentNullException.ThrowIfNull(recentOutOfBounds);
        if (counts.Length != _bins.Length)
        {
            throw new ArgumentException($"The state has {counts.Length} bins; this histogram has {_bins.Length}.", nameof(counts));
        }

        ArgumentOutOfRangeException.ThrowIfNegative(outOfBounds);
        counts.CopyTo(_bins);
        InRange = 0;
        foreach (ushort count in _bins)
        {
            InRange += count;
        }

        OutOfBounds = outOfBounds;
        _recentOutOfBounds.Clear();
        _recentOutOfBounds.AddRange(recentOutOfBounds.TakeLast(RecentOutOfBoundsKept));
    }

    // Ages every count by half so the newest idle time fits: the shape stays, the state stays 16 bits a bin.
    private void Halve()
    {
        InRange = 0;
        for (int i = 0; i < _bins.Length; i++)
        {
            _bins[i] /= 2;
            InRange += _bins[i];
        }

        OutOfBounds /= 2;
    }
}
