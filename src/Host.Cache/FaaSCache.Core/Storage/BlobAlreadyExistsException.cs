namespace FaaSCache.Storage;

/// <summary>A create-only write (<c>If-None-Match: *</c>) found the blob there already: nothing was written.</summary>
public sealed class BlobAlreadyExistsException(string message, Exception? inner = null) : BlobKeyException(message, inner);
