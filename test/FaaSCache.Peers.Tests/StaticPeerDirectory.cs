using FaaSCache.Peers;

namespace FaaSCache.Peers.Tests;

/// <summary>A fixed member → endpoint map (the membership daemon's job in the host).</summary>
internal sealed class StaticPeerDirectory : IPeerDirectory
{
    private readonly ConcurrentDictionary<string, Uri> _endpoints = new(StringComparer.Ordinal);

    public void Set(string memberId, Uri endpoint) => _endpoints[memberId] = endpoint;

    public bool TryGetEndpoint(string memberId, out Uri endpoint) => _endpoints.TryGetValue(memberId, out endpoint!);
}
