using FaaSCache.Ownership;
using FaaSCache.Peers;

namespace FaaSCache.Membership;

/// <summary>
/// Settings of a <see cref="MembershipDaemon"/>. The timing and ring settings mirror host.json's
/// <c>extensions.faasCache.membership</c> section (<c>heartbeatInterval</c>, <c>failureTimeout</c>, <c>virtualNodes</c>).
/// </summary>
public sealed class MembershipDaemonOptions
{
    /// <summary>The default heartbeat interval (host.json's default).</summary>
    public static readonly TimeSpan DefaultHeartbeatInterval = TimeSpan.FromSeconds(5);

    /// <summary>The default failure timeout (host.json's default).</summary>
    public static readonly TimeSpan DefaultFailureTimeout = TimeSpan.FromSeconds(15);

    /// <summary>The default interval of the cheap change check between heartbeats.</summary>
    public static readonly TimeSpan DefaultWatchInterval = TimeSpan.FromSeconds(1);

    /// <summary>Gets or sets the app whose instances form one cache (names the membership blob).</summary>
    public string App { get; set; } = "";

    /// <summary>Gets or sets this instance's member id (its name on the ring).</summary>
    public string SelfId { get; set; } = "";

    /// <summary>Gets or sets where this instance's peer service listens (absolute URI).</summary>
    public Uri? SelfEndpoint { get; set; }

    /// <summary>Gets or sets how often this instance writes its heartbeat (and removes failed members).</summary>
    public TimeSpan HeartbeatInterval { get; set; } = DefaultHeartbeatInterval;

    /// <summary>Gets or sets how old a heartbeat may get before its member counts as failed; greater than <see cref="HeartbeatInterval"/>.</summary>
    public TimeSpan FailureTimeout { get; set; } = DefaultFailureTimeout;

    /// <summary>Gets or sets the points per member on the consistent-hash ring.</summary>
    public int VirtualNodes { get; set; } = ConsistentHashRing.DefaultVirtualNodes;

    /// <summary>
    /// Gets or sets how often to ask, between heartbeats, whether the blob changed: one conditional GET with
    /// <c>If-None-Match</c> on the last ETag, answered 304 (no body) when nothing changed. Null or zero turns it
    /// off (changes are then seen at the next heartbeat); values at or above <see cref="HeartbeatInterval"/> add nothing.
    /// </summary>
    public TimeSpan? WatchInterval { get; set; } = DefaultWatchInterval;

    /// <summary>Gets or sets optional facts about this instance written with its entry (host name, version...).</summary>
    public IReadOnlyDictionary<string, string>? Metadata { get; set; }

    /// <summary>Throws with a message naming the setting unless every setting is usable.</summary>
    /// <exception cref="ArgumentException">A setting is missing or out of range.</exception>
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

        if (HeartbeatInterval <= TimeSpan.Zero)
        {
            throw new ArgumentException($"heartbeatInterval must be a positive time span such as 00:00:05, not {HeartbeatInterval}.", nameof(HeartbeatInterval));
        }

        if (FailureTimeout <= HeartbeatInterval)
        {
            throw new ArgumentException(
                $"failureTimeout ({FailureTimeout}) must be greater than heartbeatInterval ({HeartbeatInterval}), or live members would be removed.",
                nameof(FailureTimeout));
        }

        if (VirtualNodes is < 1 or > 10_000)
        {
            throw new ArgumentException($"virtualNodes must be a whole number from 1 to 10000, not {VirtualNodes}.", nameof(VirtualNodes));
        }

        if (WatchInterval < TimeSpan.Zero)
        {
            throw new ArgumentException($"{nameof(WatchInterval)} must be null, zero (off) or positive, not {WatchInterval}.", nameof(WatchInterval));
        }
    }
}
