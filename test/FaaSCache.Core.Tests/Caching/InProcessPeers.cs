using FaaSCache.Caching;
using FaaSCache.Peers;

namespace FaaSCache.Core.Tests.Caching;

/// <summary>
/// An in-process transport between real cachelets, for testing the read and write paths of §3.2
/// without sockets (the gRPC transport has its own tests). A member can be taken "down".
/// </summary>
internal sealed class InProcessPeers : IPeerClient
{
    private readonly Dictionary<string, Cachelet> _members = new(StringComparer.Ordinal);
    private readonly HashSet<string> _down = new(StringComparer.Ordinal);

    public int Gets { get; private set; }

    /// <summary>Gets or sets a value indicating whether invalidations are lost on the way.</summary>
    public bool DropInvalidations { get; set; }

    public int Puts { get; private set; }

    public void Add(string id, Cachelet cachelet) => _members[id] = cachelet;

    public void TakeDown(string id) => _down.Add(id);

    public async Task<PeerFetchResult<T>?> GetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        Gets++;
        var served = await Member(memberId).ServePeerGetAsync(key, fetchIfMissing, cancellationToken);
        if (served is not { } s)
        {
            return null;
        }

        using ObjectLease lease = s.Lease;
        await using Stream content = lease.OpenRead();
        T value = await consume(lease.Count, lease.Version, content, cancellationToken);
        return new PeerFetchResult<T>(lease.Version, lease.Count, s.Hit, value);
    }

    public async Task<PeerWriteResult> PutAsync(string memberId, string key, Stream content, long length, CancellationToken cancellationToken = default)
    {
        Puts++;
        return await Member(memberId).AcceptPeerWriteAsync(key, content, length, cancellationToken);
    }

    public Task<string?> GetVersionAsync(string memberId, string key, CancellationToken cancellationToken = default)
        => Member(memberId).GetOwnerVersionAsync(key, cancellationToken);

    public Task InvalidateAsync(string memberId, string key, string version, CancellationToken cancellationToken = default)
    {
        if (!DropInvalidations)
        {
            Member(memberId).Invalidate(key, version);
        }

        return Task.CompletedTask;
    }

    private Cachelet Member(string id)
        => _down.Contains(id) || !_members.TryGetValue(id, out Cachelet? c)
            ? throw new PeerUnavailableException($"member {id} is down") { MemberId = id }
            : c;
}
