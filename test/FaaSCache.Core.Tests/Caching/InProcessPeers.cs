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

    /// <summary>Gets or sets a member that commits every write it is sent and then fails before it answers.</summary>
    public string? DiesAfterPut { get; set; }

    public void Add(string id, Cachelet cachelet) => _members[id] = cachelet;

    public void TakeDown(string id) => _down.Add(id);

    public async Task<PeerFetchResult<T>?> GetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        Gets++;
        PeerGetServe? served = await Member(memberId).ServePeerGetAsync(key, fetchIfMissing, follow: false, cancellationToken);
        if (served is not { Lease: { } held } s)
        {
            return null;
        }

        using ObjectLease lease = held;
        await using Stream content = lease.OpenRead();
        T value = await consume(lease.Count, lease.Version, content, cancellationToken);
        return new PeerFetchResult<T>(lease.Version, lease.Count, s.Hit, value);
    }

    public async Task<PeerWriteResult> PutAsync(string memberId, string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default)
    {
        Puts++;
        PeerWriteResult result = await Member(memberId).AcceptPeerWriteAsync(key, content, length, createOnly, cancellationToken);
        return memberId == DiesAfterPut ? throw new PeerUnavailableException($"member {memberId} died before it answered the put") { MemberId = memberId } : result;
    }

    public int RangeLoads { get; private set; }

    /// <summary>Gets or sets a hook run before a member serves a range load (a test can take the member down there).</summary>
    public Action<string>? BeforeRangeLoad { get; set; }

    public async Task<T> LoadRangeAsync<T>(string memberId, string key, string version, long offset, long length, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        RangeLoads++;
        BeforeRangeLoad?.Invoke(memberId);
        Cachelet member = Member(memberId);
        return await member.ServeRangeLoadAsync(key, version, offset, length, (count, etag, content, token) => consume(count, etag, content, token), cancellationToken);
    }

    public Task<PeerProbeResult> ProbeAsync(string memberId, long length, CancellationToken cancellationToken = default)
    {
        Member(memberId);
        return Task.FromResult(new PeerProbeResult(length, TimeSpan.FromMilliseconds(1), TimeSpan.FromSeconds(length / 1e9)));
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
            ? throw new PeerUnavailableException($"member {id} is down") { MemberId = id, MayHaveArrived = false }
            : c;
}
