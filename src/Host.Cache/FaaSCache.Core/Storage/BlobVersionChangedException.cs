namespace FaaSCache.Storage;

/// <summary>A conditional request (<c>If-Match</c>) found another version of the blob (412).</summary>
public sealed class BlobVersionChangedException(string message, Exception? inner = null) : BlobKeyException(message, inner);
