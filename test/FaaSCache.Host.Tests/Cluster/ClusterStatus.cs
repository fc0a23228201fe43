using FaaSCache.Diagnostics;
using FaaSCache.TestSupport;

namespace FaaSCache.Host.Tests.Cluster;

/// <summary>The parts of <c>/admin/host/status</c> a cluster test looks at: membership, peers, counters, maps, pending writes.</summary>
internal sealed record ClusterStatus(
    string InstanceId,
    string? PeerEndpoint,
    IReadOnlyList<ClusterMember>? Members,
    CacheletCounters? Counters,
    HostSharedMemoryStatus SharedMemory,
    long PendingWrites)
{
    /// <summary>The member ids this instance sees, in order.</summary>
    public IReadOnlyList<string> MemberIds => Members?.Select(m => m.Id).Order(StringComparer.Ordinal).ToList() ?? [];

    /// <summary>The counters; throws when the cache is off.</summary>
    public CacheletCounters Count => Counters ?? throw new InvalidOperationException($"{InstanceId} has no cache counters (cache off?).");
}

/// <summary>One entry of the status' <c>members</c>.</summary>
internal sealed record ClusterMember(string Id, string? Endpoint, DateTimeOffset LastHeartbeat);

/// <summary>What one <c>Read</c> invocation answered and where its input came from.</summary>
internal sealed record ClusterRead(string Instance, string Source, long Bytes, string Sha256, string Head, HostInvocation Invocation);
