namespace FaaSCache.ScaleController.Status;

/// <summary>
/// The keep-alive part of the status: the mode, the current windows and the histogram's state. The histogram and its
/// keeper exist only in histogram mode, so they are optional dependencies (null in fixed mode).
/// </summary>
public sealed class KeepAliveStatusSource(
    ScaleControllerOptions options,
    FrontDoorTraffic traffic,
    TimeProvider time,
    HybridHistogramPolicy? histogram = null,
    HistogramKeeper? keeper = null)
{
    /// <summary>The keep-alive status now.</summary>
    public KeepAliveStatus Read()
    {
        double? idle = traffic.Pending == 0 && traffic.IdleSince is { } since ? (time.GetUtcNow() - since).TotalSeconds : null;
        if (options.KeepAlive != KeepAliveMode.Histogram)
        {
            return new("fixed", idle, null, options.IdleToZero.TotalSeconds, null, string.Create(CultureInfo.InvariantCulture, $"unload after idleToZero {options.IdleToZero.TotalSeconds:0.#} s without a request; no pre-warm"), null, null, null);
        }

        if (histogram is null || keeper is null)
        {
            throw new InvalidOperationException("keepAlive is histogram but the hybrid histogram is not composed (ScaleControllerApp registers it in histogram mode).");
        }

        KeepAliveWindows windows = histogram.Windows(options.AppName);
        (int total, int oob) = histogram.WithHistogram(options.AppName, h => (h.Total, h.OutOfBounds));
        return new(
            "histogram",
            idle,
            windows.PreWarm.TotalSeconds,
            windows.KeepAlive.TotalSeconds,
            windows.Basis.ToString().ToLowerInvariant(),
            windows.Reason,
            total,
            oob,
            keeper.Info);
    }
}

/// <summary>How the controller unloads and reloads an idle app, in the status.</summary>
/// <param name="Mode">fixed or histogram.</param>
/// <param name="IdleSeconds">How long the app has been idle (null: a request is in flight or none was seen).</param>
/// <param name="PreWarmSeconds">The pre-warm window (histogram), from the start of the idle period.</param>
/// <param name="KeepAliveSeconds">The keep-alive window (from the end of the pre-warm window; fixed: idleToZero).</param>
/// <param name="Basis">What decided the windows: histogram, fallback or predictor.</param>
/// <param name="Reason">The numbers behind the windows.</param>
/// <param name="IdleTimes">Idle times counted.</param>
/// <param name="OutOfBounds">Of them, beyond the histogram's range.</param>
/// <param name="State">Where the histogram is kept and its size.</param>
public sealed record KeepAliveStatus(
    string Mode,
    double? IdleSeconds,
    double? PreWarmSeconds,
    double? KeepAliveSeconds,
    string? Basis,
    string Reason,
    int? IdleTimes,
    int? OutOfBounds,
    KeepAliveStateInfo? State);
