namespace FaaSCache.Peers;

/// <summary>
/// The trailer with which an owner says why it did not make a forwarded write, so the sender reports that reason (a
/// definite failure) rather than "the owner failed before it answered" (an unknown outcome).
/// </summary>
internal static class PeerFailureTrailer
{
    /// <summary>The trailer's name.</summary>
    public const string Name = "faascache-failure";

    /// <summary>The owner's storage did not answer (<see cref="Storage.StorageUnavailableException"/>).</summary>
    public const string StorageUnavailable = "storage-unavailable";

    /// <summary>The owner had no membership lease (<see cref="Caching.MembershipLeaseLostException"/>).</summary>
    public const string LeaseLost = "lease-lost";
}
