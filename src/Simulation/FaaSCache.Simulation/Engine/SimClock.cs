namespace FaaSCache.Simulation.Engine;

/// <summary>
/// The replay's time for the code that reads a <see cref="TimeProvider"/> (the invocation meter, the bandwidth scaler):
/// the trace's own clock, in microseconds since the Unix epoch, moved forward by the simulator only.
/// </summary>
internal sealed class SimClock : TimeProvider
{
    private long _micros;

    /// <summary>Gets the time in microseconds since the Unix epoch.</summary>
    public long Micros => _micros;

    /// <inheritdoc />
    public override long TimestampFrequency => 1_000_000;

    /// <inheritdoc />
    public override long GetTimestamp() => _micros;

    /// <inheritdoc />
    public override DateTimeOffset GetUtcNow() => DateTimeOffset.UnixEpoch.AddTicks(_micros * 10);

    /// <summary>Moves the clock to <paramref name="micros"/>; time never goes back.</summary>
    public void Set(long micros) => _micros = Math.Max(_micros, micros);
}
