namespace FaaSCache.Storage;

/// <summary>
/// An operation on one blob failed in a way its caller tells apart by type (not found, exists already, changed, storage
/// down, a write whose outcome is unknown or that was not made). Every one takes a message that says what happened to
/// which key; none is made without one.
/// </summary>
/// <param name="message">What happened, naming the key.</param>
/// <param name="inner">The cause (a storage or peer error), if any.</param>
public abstract class BlobKeyException(string message, Exception? inner) : Exception(message, inner)
{
    /// <summary>Gets the blob key of the operation (container/name), or the container of a listing.</summary>
    public string? Key { get; init; }
}
