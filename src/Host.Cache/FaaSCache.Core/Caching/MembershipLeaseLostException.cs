namespace FaaSCache.Caching;

/// <summary>
/// A write through an instance that has had no membership lease for the whole wait (its heartbeats do not reach storage,
/// or it is cut off): it cannot tell the key's owner, so the write was not made (a definite failure; try again).
/// </summary>
public sealed class MembershipLeaseLostException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="MembershipLeaseLostException"/> class.</summary>
    public MembershipLeaseLostException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="MembershipLeaseLostException"/> class.</summary>
    public MembershipLeaseLostException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="MembershipLeaseLostException"/> class.</summary>
    public MembershipLeaseLostException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the key whose write was not made.</summary>
    public string? Key { get; init; }
}
