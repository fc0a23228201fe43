namespace FaaSCache.Prewarm;

/// <summary>
/// Predicts the next idle time from the recent out-of-bounds ones: simple exponential smoothing (level only,
/// alpha 0.5), the stand-in for the ARIMA model of ATC'20 (§4.2 there): with at most eight points an ARIMA fit is
/// no better determined, and this one is cheap, deterministic and computed by hand in the tests.
/// </summary>
public static class IdleTimePredictor
{
    /// <summary>The smoothing factor: the weight of the newest idle time.</summary>
    public const double Alpha = 0.5;

    /// <summary>The smoothed level after the last of <paramref name="idleTimes"/> (oldest first); throws when empty.</summary>
    public static TimeSpan Predict(IReadOnlyList<TimeSpan> idleTimes)
    {
        ArgumentNullException.ThrowIfNull(idleTimes);
        if (idleTimes.Count == 0)
        {
            throw new ArgumentException("No idle time to predict from.", nameof(idleTimes));
        }

        double level = idleTimes[0].TotalSeconds;
        for (int i = 1; i < idleTimes.Count; i++)
        {
            level = (Alpha * idleTimes[i].TotalSeconds) + ((1 - Alpha) * level);
        }

        return TimeSpan.FromSeconds(level);
    }
}
