namespace FaaSCache.Cluster;

/// <summary>Options of the peer service (the server side of cachelet-to-cachelet calls); checked by <see cref="PeerServerOptionsValidator"/>.</summary>
public sealed class PeerServerOptions
{
    /// <summary>Gets or sets the app's peer key; calls without a valid token made with it are refused. Required.</summary>
    public PeerKey? Key { get; set; }

    /// <summary>Gets or sets the content bytes per streamed message of a get (between <see cref="PeerWire.MinChunkSize"/> and <see cref="PeerWire.MaxChunkSize"/>).</summary>
    public int ChunkSize { get; set; } = PeerWire.DefaultChunkSize;

    /// <summary>
    /// Gets or sets how far a caller's clock may be from ours: a token is accepted while its time is within this of ours,
    /// and its nonce is remembered that long (instances of one app keep their clocks in sync; memory grows with it).
    /// </summary>
    public TimeSpan MaxClockSkew { get; set; } = TimeSpan.FromSeconds(30);
}
