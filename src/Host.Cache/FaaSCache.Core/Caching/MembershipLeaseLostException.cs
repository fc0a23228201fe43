namespace FaaSCache.Caching;

/// <summary>
/// A write through an instance that has had no membership lease for the whole wait (its heartbeats do not reach storage,
/// or it is cut off): it cannot tell the key's owner, so the write was not made (a definite failure; try again).
/// </summary>
public sealed class MembershipLeaseLostException(string message, Exception? inner = null) : BlobKeyException(message, inner);
