namespace FaaSCache.Peers;

/// <summary>Options of the peer service (the server side of cachelet-to-cachelet calls).</summary>
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

    internal void Validate()
    {
        if (Key is null)
        {
            throw new InvalidOperationException("PeerServerOptions.Key is not set: derive it with PeerKey.FromConnectionString(storageConnectionString, appName).");
        }

        if (ChunkSize is < PeerWire.MinChunkSize or > PeerWire.MaxChunkSize)
        {
            throw new InvalidOperationException($"PeerServerOptions.ChunkSize is {ChunkSize}; it must be between {PeerWire.MinChunkSize} and {PeerWire.MaxChunkSize}.");
        }

        if (MaxClockSkew <= TimeSpan.Zero)
        {
            throw new InvalidOperationException($"PeerServerOptions.MaxClockSkew is {MaxClockSkew}; it must be positive.");
        }
    }
}
