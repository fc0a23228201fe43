using System.Globalization;

namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>
/// The hybrid-histogram keep-alive / pre-warm policy (Shahrad et al., ATC'20, as Faa$T §3.3 uses it), per app: records
/// idle times into each app's <see cref="IdleTimeHistogram"/>, derives the pre-warm and keep-alive windows, and tells,
/// from the start of the current idle period and the <see cref="TimeProvider"/>'s now, whether the app should be
/// loaded. Pure: it starts and stops nothing. Thread-safe.
/// </summary>
public sealed class HybridHistogramPolicy
{
    private readonly HybridHistogramOptions _options;
    private readonly TimeProvider _time;
    private readonly Dictionary<string, IdleTimeHistogram> _apps = new(StringComparer.Ordinal);
    private readonly Lock _gate = new();

    /// <summary>Initializes a new instance of the <see cref="HybridHistogramPolicy"/> class.</summary>
    public HybridHistogramPolicy(HybridHistogramOptions options, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(time);
        _options = options;
        _time = time;
    }

    /// <summary>Gets the settings.</summary>
    public HybridHistogramOptions Options => _options;

    /// <summary>Counts one idle time of <paramref name="app"/> (the time from its last request's end to the next arrival).</summary>
    public void RecordIdleTime(string app, TimeSpan idle)
    {
        lock (_gate)
        {
            HistogramOf(app).Add(idle);
        }
    }

    /// <summary>Runs <paramref name="action"/> on <paramref name="app"/>'s histogram under the policy's lock (to save or restore it).</summary>
    public T WithHistogram<T>(string app, Func<IdleTimeHistogram, T> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        lock (_gate)
        {
            return action(HistogramOf(app));
        }
    }

    /// <summary>The windows of <paramref name="app"/> from its histogram now.</summary>
    public KeepAliveWindows Windows(string app)
    {
        lock (_gate)
        {
            return Compute(HistogramOf(app), _options);
        }
    }

    /// <summary>
    /// Whether <paramref name="app"/>, idle since <paramref name="idleSince"/> (no request in flight), should be loaded
    /// now: unloaded during the pre-warm window, loaded during the keep-alive window after it, unloaded after both.
    /// </summary>
    public KeepAliveVerdict Evaluate(string app, DateTimeOffset idleSince)
    {
        KeepAliveWindows windows = Windows(app);
        TimeSpan idle = _time.GetUtcNow() - idleSince;
        string numbers = Text($"idle {Seconds(idle)}, pre-warm {Seconds(windows.PreWarm)}, keep-alive {Seconds(windows.KeepAlive)} ({windows.Basis}: {windows.Reason})");
        if (idle >= windows.UnloadAfter)
        {
            return new(KeepAliveAction.Unload, "keep-alive expired: " + numbers, windows);
        }

        if (windows.PreWarm > TimeSpan.Zero && idle < windows.PreWarm)
        {
            return new(KeepAliveAction.Unload, "before the pre-warm time: " + numbers, windows);
        }

        return windows.PreWarm > TimeSpan.Zero
            ? new(KeepAliveAction.Load, "pre-warm: the predicted next invocation is near; " + numbers, windows, HoldsLoaded: true)
            : new(KeepAliveAction.Keep, "keep-alive runs: " + numbers, windows, HoldsLoaded: true);
    }

    /// <summary>The windows <paramref name="histogram"/> gives under <paramref name="options"/> (the reference's rules).</summary>
    public static KeepAliveWindows Compute(IdleTimeHistogram histogram, HybridHistogramOptions options)
    {
        ArgumentNullException.ThrowIfNull(histogram);
        ArgumentNullException.ThrowIfNull(options);
        TimeSpan range = histogram.Range;
        if (histogram.Total < options.MinSamples)
        {
            return new(TimeSpan.Zero, range, WindowBasis.Fallback, Text($"{histogram.Total} idle time(s), fewer than {options.MinSamples}"));
        }

        double oobShare = (double)histogram.OutOfBounds / histogram.Total;
        if (oobShare >= options.OutOfBoundsShare && histogram.RecentOutOfBounds.Count > 0)
        {
            // ATC'20: pre-warm at 85% of the predicted idle time, keep alive for 2 x 15% of it.
            TimeSpan predicted = IdleTimePredictor.Predict(histogram.RecentOutOfBounds);
            return new(predicted * 0.85, predicted * 0.15 * 2, WindowBasis.Predictor, Text($"{oobShare * 100:0}% out of bounds; predicted next idle time {Seconds(predicted)}"));
        }

        double cv = histogram.CoefficientOfVariation();
        if (cv < options.MinCoefficientOfVariation)
        {
            return new(TimeSpan.Zero, range, WindowBasis.Fallback, Text($"not representative: CV {cv:0.###} < {options.MinCoefficientOfVariation}"));
        }

        // Head: the lower edge of its bin; tail: the upper edge of its bin (both err towards being loaded).
        TimeSpan head = histogram.BinWidth * histogram.PercentileBin(options.HeadPercentile);
        TimeSpan tail = histogram.BinWidth * (histogram.PercentileBin(options.TailPercentile) + 1);
        TimeSpan preWarm = head * (1 - options.Margin);
        TimeSpan end = tail * (1 + options.Margin);
        return new(preWarm, end - preWarm, WindowBasis.Histogram, Text($"CV {cv:0.###}, head {Seconds(head)}, tail {Seconds(tail)}, {histogram.Total} idle times"));
    }

    private static string Seconds(TimeSpan t) => Text($"{t.TotalSeconds:0.#} s");

    private static string Text(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    private IdleTimeHistogram HistogramOf(string app)
    {
        if (!_apps.TryGetValue(app, out IdleTimeHistogram? histogram))
        {
            histogram = new IdleTimeHistogram(_options.BinWidth, _options.Bins);
            _apps[app] = histogram;
        }

        return histogram;
    }
}
