namespace FaaSCache.Storage;

/// <summary>A conditional request (<c>If-Match</c>) found another version of the blob (412).</summary>
public sealed class BlobVersionChangedException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="BlobVersionChangedException"/> class.</summary>
    public BlobVersionChangedException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobVersionChangedException"/> class.</summary>
    public BlobVersionChangedException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobVersionChangedException"/> class.</summary>
    public BlobVersionChangedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Gets the key.</summary>
    public string? Key { get; init; }
}
