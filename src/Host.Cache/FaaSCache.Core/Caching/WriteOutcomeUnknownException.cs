namespace FaaSCache.Caching;

/// <summary>A write was handed to its owner, which failed before it answered: it may or may not have taken effect.</summary>
public sealed class WriteOutcomeUnknownException(string message, Exception? inner = null) : BlobKeyException(message, inner);
