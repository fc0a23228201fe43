namespace FaaSCache.Prewarm;

/// <summary>
/// What a cachelet does before it asks for a cache-size scale-out (§4 with §3.3): it records the objects it could not
/// keep, so that the instance the vote brings pre-warms the ones it will own instead of finding its part of the ring
/// empty. Implemented by the <see cref="LoadDaemon"/>.
/// </summary>
public interface IScaleOutHandOff
{
    /// <summary>Writes this instance's snapshot for the coming instance (at most once per interval); never throws.</summary>
    /// <param name="reason">Why a scale-out is asked for (logged).</param>
    /// <param name="cancellationToken">Stops the write.</param>
    /// <returns>The snapshot's key, or null when none was written (too soon after the last, pre-warm off, nothing cached, or it failed).</returns>
    Task<string?> BeforeScaleOutAsync(string reason, CancellationToken cancellationToken = default);
}
