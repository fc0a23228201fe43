namespace FaaSCache.ScaleController.KeepAlive;

/// <summary><c>--keep-alive fixed</c>: unload after <c>--idle-to-zero</c> without a request (measured from the last arrival); never pre-warms.</summary>
public sealed class FixedKeepAlive(TimeSpan idleToZero, TimeProvider time) : IKeepAlivePolicy
{
    /// <inheritdoc />
    public KeepAliveVerdict Evaluate(PolicyInput input, DateTimeOffset started)
    {
        ArgumentNullException.ThrowIfNull(input);
        TimeSpan idle = time.GetUtcNow() - (input.LastRequest ?? started);
        return idle >= idleToZero
            ? new(KeepAliveAction.Unload, string.Create(CultureInfo.InvariantCulture, $"idle: no request for {idle.TotalSeconds:0} s (idleToZero {idleToZero.TotalSeconds:0} s)"))
            : new(KeepAliveAction.Keep, "not idle long enough");
    }
}
