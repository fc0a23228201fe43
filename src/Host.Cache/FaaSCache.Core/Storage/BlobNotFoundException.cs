namespace FaaSCache.Storage;

/// <summary>The blob (or its container) does not exist in storage.</summary>
public sealed class BlobNotFoundException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="BlobNotFoundException"/> class.</summary>
    public BlobNotFoundException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobNotFoundException"/> class.</summary>
    public BlobNotFoundException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobNotFoundException"/> class.</summary>
    public BlobNotFoundException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the key that was not found.</summary>
    public string? Key { get; init; }
}
