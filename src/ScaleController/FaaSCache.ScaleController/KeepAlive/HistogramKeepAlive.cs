namespace FaaSCache.ScaleController.KeepAlive;

/// <summary><c>--keep-alive histogram</c>: the app's <see cref="HybridHistogramPolicy"/> windows, from the end of its last request.</summary>
public sealed class HistogramKeepAlive(HybridHistogramPolicy histogram, string app) : IKeepAlivePolicy
{
    /// <inheritdoc />
    public KeepAliveVerdict Evaluate(PolicyInput input, DateTimeOffset started)
    {
        ArgumentNullException.ThrowIfNull(input);
        return histogram.Evaluate(app, input.IdleSince ?? started);
    }
}
