namespace FaaSCache.Storage;

/// <summary>A create-only write (<c>If-None-Match: *</c>) found the blob there already: nothing was written.</summary>
public sealed class BlobAlreadyExistsException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="BlobAlreadyExistsException"/> class.</summary>
    public BlobAlreadyExistsException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobAlreadyExistsException"/> class.</summary>
    public BlobAlreadyExistsException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BlobAlreadyExistsException"/> class.</summary>
    public BlobAlreadyExistsException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the key that exists.</summary>
    public string? Key { get; init; }
}
