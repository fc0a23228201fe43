namespace FaaSCache.Prewarm;

/// <summary>Where a pair of windows came from.</summary>
public enum WindowBasis
{
    /// <summary>The histogram's head and tail percentiles (it is representative).</summary>
    Histogram,

    /// <summary>The histogram is not trusted (too few idle times or not representative): pre-warm 0, keep-alive = the range.</summary>
    Fallback,

    /// <summary>Too many idle times are out of bounds: the time-series predictor's next idle time.</summary>
    Predictor,
}

/// <summary>
/// The hybrid histogram's answer, measured from the start of an idle period: the app is unloaded for
/// <paramref name="PreWarm"/> (none when zero), then loaded and kept for <paramref name="KeepAlive"/>, then unloaded.
/// </summary>
/// <param name="PreWarm">How long after the idle period starts the app is loaded again (0: it stays loaded).</param>
/// <param name="KeepAlive">How long, from the end of the pre-warm window, the app is kept loaded.</param>
/// <param name="Basis">What decided the windows.</param>
/// <param name="Reason">The numbers that decided them, in words.</param>
public sealed record KeepAliveWindows(TimeSpan PreWarm, TimeSpan KeepAlive, WindowBasis Basis, string Reason)
{
    /// <summary>Gets when, from the start of the idle period, the app is unloaded for good (pre-warm + keep-alive).</summary>
    public TimeSpan UnloadAfter => PreWarm + KeepAlive;
}
