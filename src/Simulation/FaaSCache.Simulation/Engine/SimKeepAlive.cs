namespace FaaSCache.Simulation.Engine;

/// <summary>
/// One replayed app's keep-alive: what happened while it was idle between two invocations, by the fixed unload period
/// or by the hybrid-histogram rules the scale controller runs (<see cref="HybridHistogramWindows"/>, the same code).
/// </summary>
/// <remarks>
/// Under the hybrid histogram, as the controller: each idle time between invocations is counted in the app's histogram
/// after it has been judged by the windows the histogram gave before it; an app whose windows name a pre-warm time is
/// unloaded at the controller's next poll after it went idle and loaded again at the pre-warm time, kept for the
/// keep-alive window, and unloaded after it; without a pre-warm time it stays loaded for the keep-alive window.
/// </remarks>
internal sealed class SimKeepAlive
{
    private readonly KeepAliveRule _rule;
    private readonly long _fixedMs;
    private readonly long _pollMs;
    private readonly HybridHistogramOptions _histogramOptions;
    private readonly IdleTimeHistogram? _histogram;

    public SimKeepAlive(PolicySet policy, SimulationOptions options)
    {
        _rule = policy.EffectiveKeepAlive;
        _fixedMs = (long)(policy.UnloadAfterIdle ?? options.UnloadAfterIdle).TotalMilliseconds;
        _pollMs = (long)options.PollInterval.TotalMilliseconds;
        _histogramOptions = options.HybridHistogram;
        _histogram = _rule == KeepAliveRule.HybridHistogram ? new IdleTimeHistogram(_histogramOptions.BinWidth, _histogramOptions.Bins) : null;
    }

    /// <summary>
    /// The app, loaded, last accessed at <paramref name="lastMs"/>, is accessed again at <paramref name="nextMs"/>
    /// (<paramref name="newInvocation"/>: by an invocation that had not started): whether it was unloaded in between,
    /// when, and whether it was loaded again (and pre-warmed) before the access, and when; null when it stayed loaded.
    /// </summary>
    public IdleOutcome? Idle(long lastMs, long nextMs, bool newInvocation)
    {
        long gap = nextMs - lastMs;
        if (_histogram is null)
        {
            return gap > _fixedMs ? new IdleOutcome(lastMs + _fixedMs, null) : null;
        }

        if (!newInvocation || gap <= 0)
        {
            return null;
        }

        KeepAliveWindows windows = HybridHistogramWindows.Compute(_histogram, _histogramOptions, explain: false);
        _histogram.Add(TimeSpan.FromMilliseconds(gap));
        long preWarm = (long)windows.PreWarm.TotalMilliseconds;
        long unloadAfter = (long)windows.UnloadAfter.TotalMilliseconds;
        if (preWarm <= _pollMs)
        {
            // No pre-warm time (or one before the controller's next poll): kept loaded for the keep-alive window.
            return gap > unloadAfter ? new IdleOutcome(lastMs + unloadAfter, null) : null;
        }

        if (gap <= _pollMs)
        {
            return null;
        }

        // Unloaded at the next poll; loaded again at the pre-warm time if the invocation came inside the keep-alive window.
        return new IdleOutcome(lastMs + _pollMs, gap >= preWarm && gap <= unloadAfter ? lastMs + preWarm : null);
    }
}

/// <summary>What happened to an idle app that was unloaded.</summary>
/// <param name="UnloadMs">When it was unloaded (Unix ms).</param>
/// <param name="ReloadedMs">When it was loaded again ahead of the next invocation (pre-warmed), or null: that invocation loads it.</param>
internal readonly record struct IdleOutcome(long UnloadMs, long? ReloadedMs);
