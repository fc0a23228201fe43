namespace FaaSCache.Peers;

/// <summary>Options of <see cref="GrpcPeerClient"/>; checked by <see cref="PeerClientOptionsValidator"/>.</summary>
public sealed class PeerClientOptions
{
    /// <summary>Gets or sets the deadline of small calls: version queries, invalidations, and the first reply of a get without fetch.</summary>
    public TimeSpan CallTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Gets or sets how long the owner may take before the first reply of a get with fetch (it may be reading the
    /// object from storage first: a remote miss) and before answering a put (it may persist it first).
    /// </summary>
    public TimeSpan FetchTimeout { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Gets or sets the longest wait for the next chunk of a transfer; a peer silent for longer is unavailable.</summary>
    public TimeSpan IdleTimeout { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>Gets or sets the TCP connect timeout.</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(3);

    /// <summary>Gets or sets the content bytes per message of a put.</summary>
    public int ChunkSize { get; set; } = PeerWire.DefaultChunkSize;

    /// <summary>
    /// Gets or sets the initial HTTP/2 receive window of each stream (how much a peer may send before we read it).
    /// The default is HttpClient's (64 KiB), which it then grows with the measured round trip. Measured on loopback:
    /// larger initial windows (1 or 8 MiB) gave no more throughput, but let the owner run ahead into HttpClient's
    /// pooled 16 KiB receive blocks, which overflow the array pool and become garbage (20 to 45 MB allocated per
    /// 128 MB get, against 2 MB with the default).
    /// </summary>
    public int InitialStreamWindowSize { get; set; } = 65535;

    /// <summary>
    /// Gets or sets a value indicating whether a peer's whole-object gets, once a first gRPC get's header has named its
    /// bulk port, go over that bulk connection (raw TCP beside gRPC, same key, same checksum, one round trip on a
    /// kept-open connection) rather than as gRPC calls. On: a 128 MB remote hit moves each byte through two kernel copies
    /// and one pwrite instead of about seven copies (benchmarks/README.md, remote-read). Off: every get over gRPC, as with
    /// a peer that has no bulk port.
    /// </summary>
    public bool UseBulkTransfers { get; set; } = true;
}
