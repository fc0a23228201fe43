namespace FaaSCache.Simulation.Trace;

/// <content>The app-weighted statistics: one <see cref="AppSummary"/> per app.</content>
public sealed partial class TraceStatistics
{
    private readonly Dictionary<string, long> _invocationStart = new(StringComparer.Ordinal);
    private readonly HashSet<string> _etags = new(StringComparer.Ordinal);
    private readonly List<AppSummary> _summaries = [];
    private long _appAccesses, _appWrites;

    /// <summary>Gets one summary per app counted, in trace order.</summary>
    public IReadOnlyList<AppSummary> AppSummaries => _summaries;

    /// <summary>The share of apps for which <paramref name="predicate"/> holds (a plain share, count / apps).</summary>
    /// <param name="predicate">What to count.</param>
    /// <returns>A share, 0..1.</returns>
    public double ShareOfApps(Func<AppSummary, bool> predicate)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        return _summaries.Count == 0 ? 0 : _summaries.Count(predicate) / (double)_summaries.Count;
    }

    /// <summary>The fewest apps that carry <paramref name="share"/> of the invocations, as a share of the apps (§2.1: 99% in under 15%).</summary>
    /// <param name="share">A share of the invocations, 0..1.</param>
    /// <returns>A share of the apps, 0..1.</returns>
    public double ShareOfAppsCarrying(double share)
    {
        long[] busiest = [.. _summaries.Select(s => s.Invocations).OrderDescending()];
        double total = busiest.Sum(), carried = 0;
        for (int k = 0; k < busiest.Length; k++)
        {
            carried += busiest[k];
            if (carried >= share * total)
            {
                return (k + 1) / (double)busiest.Length;
            }
        }

        return 1;
    }

    /// <summary>Gets the median, over apps with two invocations or more, of an app's mean time between invocations, minutes (§6.3: 20).</summary>
    public double MedianAppMeanIatMinutes
    {
        get
        {
            double[] iat = [.. _summaries.Where(s => s.Invocations > 1).Select(s => s.MeanIatMs).Order()];
            return iat.Length == 0 ? double.NaN : iat[iat.Length / 2] / 60_000;
        }
    }

    private void AddToApp(in BlobAccess access)
    {
        _appAccesses++;
        _appWrites += access.IsWrite ? 1 : 0;
        _ = _etags.Add(access.ETag);
        if (!_invocationStart.TryGetValue(access.InvocationId, out long start) || access.TimestampMs < start)
        {
            _invocationStart[access.InvocationId] = access.TimestampMs;
        }
    }

    private void EndAppSummary(string? app)
    {
        if (app is not null)
        {
            long[] starts = [.. _invocationStart.Values.Order()];
            double[] gaps = [.. starts.Skip(1).Select((t, i) => (double)(t - starts[i]))];
            double mean = gaps.Length > 0 ? gaps.Average() : double.NaN;
            double cov = gaps.Length > 1 && mean > 0 ? Math.Sqrt(gaps.Sum(g => (g - mean) * (g - mean)) / (gaps.Length - 1)) / mean : double.NaN;
            _summaries.Add(new AppSummary(app, starts.Length, _etags.Count, _appAccesses, _appWrites, mean, cov));
        }

        _invocationStart.Clear();
        _etags.Clear();
        _appAccesses = _appWrites = 0;
    }
}
