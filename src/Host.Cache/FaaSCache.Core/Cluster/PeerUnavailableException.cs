namespace FaaSCache.Cluster;

/// <summary>A peer cannot be reached, refused the call, or a transfer from it failed.</summary>
/// <param name="message">What failed, naming the member and the key.</param>
/// <param name="inner">The transport's error, if any.</param>
public sealed class PeerUnavailableException(string message, Exception? inner = null) : Exception(message, inner)
{
    /// <summary>Gets the member that failed.</summary>
    public string? MemberId { get; init; }

    /// <summary>
    /// Gets a value indicating whether the request may have reached the member before it failed (true unless it provably
    /// did not: no endpoint, connection refused, or refused by the member). A write that may have arrived may have been
    /// committed there, so it must not be applied a second time elsewhere.
    /// </summary>
    public bool MayHaveArrived { get; init; } = true;
}
