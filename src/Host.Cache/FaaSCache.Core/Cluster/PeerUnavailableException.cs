namespace FaaSCache.Cluster;

/// <summary>A peer cannot be reached, refused the call, or a transfer from it failed.</summary>
public sealed class PeerUnavailableException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="PeerUnavailableException"/> class.</summary>
    public PeerUnavailableException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="PeerUnavailableException"/> class.</summary>
    public PeerUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="PeerUnavailableException"/> class.</summary>
    public PeerUnavailableException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the member that failed.</summary>
    public string? MemberId { get; init; }

    /// <summary>
    /// Gets a value indicating whether the request may have reached the member before it failed (true unless it provably
    /// did not: no endpoint, connection refused, or refused by the member). A write that may have arrived may have been
    /// committed there, so it must not be applied a second time elsewhere.
    /// </summary>
    public bool MayHaveArrived { get; init; } = true;
}
