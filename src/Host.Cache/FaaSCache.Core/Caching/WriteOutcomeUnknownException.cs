namespace FaaSCache.Caching;

/// <summary>A write was handed to its owner, which failed before it answered: it may or may not have taken effect.</summary>
public sealed class WriteOutcomeUnknownException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="WriteOutcomeUnknownException"/> class.</summary>
    public WriteOutcomeUnknownException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="WriteOutcomeUnknownException"/> class.</summary>
    public WriteOutcomeUnknownException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="WriteOutcomeUnknownException"/> class.</summary>
    public WriteOutcomeUnknownException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the key written.</summary>
    public string? Key { get; init; }
}
