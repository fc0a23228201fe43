namespace FaaSCache.Storage;

/// <summary>The blob (or its container) does not exist in storage.</summary>
public sealed class BlobNotFoundException(string message, Exception? inner = null) : BlobKeyException(message, inner);
