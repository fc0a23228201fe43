namespace FaaSCache.Membership;

/// <summary>
/// Who this instance is in its app's membership list: the app, its member id, where its peer service listens and
/// optional facts written with its entry. The timing and ring settings are host.json's
/// (<see cref="Options.MembershipOptions"/>), kept in one place.
/// </summary>
/// <param name="App">The app whose instances form one cache (names the membership blob).</param>
/// <param name="SelfId">This instance's member id (its name on the ring).</param>
/// <param name="SelfEndpoint">Where this instance's peer service listens (absolute URI).</param>
public sealed record MemberIdentity(string App, string SelfId, Uri SelfEndpoint)
{
    /// <summary>Gets optional facts about this instance written with its entry (host name, version...).</summary>
    public IReadOnlyDictionary<string, string>? Metadata { get; init; }

    /// <summary>Throws with a message naming the setting unless every value is usable.</summary>
    /// <exception cref="ArgumentException">A value is missing or malformed.</exception>
    public void Validate()
    {
        _ = MembershipStore.BlobNameFor(App);
        try
        {
            MemberInfo.ValidateId(SelfId);
        }
        catch (ArgumentException e)
        {
            throw new ArgumentException($"{nameof(SelfId)}: {e.Message}", nameof(SelfId), e);
        }

        if (SelfEndpoint is null || !SelfEndpoint.IsAbsoluteUri)
        {
            throw new ArgumentException($"{nameof(SelfEndpoint)} must be the absolute URI of this instance's peer service, not '{SelfEndpoint}'.", nameof(SelfEndpoint));
        }
    }
}
