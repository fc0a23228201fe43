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
            return HybridHistogramWindows.Compute(HistogramOf(app), _options);
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
