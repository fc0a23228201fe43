namespace FaaSCache.Cluster;

/// <summary>Constants of the peer protocol (<c>src/Protos/Peer.proto</c>) shared by client and server.</summary>
public static class PeerWire
{
    /// <summary>The metadata entry that carries the caller's <see cref="PeerKey"/> token.</summary>
    public const string AuthHeader = "x-faascache-peer-auth";

    /// <summary>Content bytes per data message unless configured otherwise (chosen by measurement: see the project README).</summary>
    public const int DefaultChunkSize = 1 << 20;

    /// <summary>The smallest chunk a sender may use.</summary>
    public const int MinChunkSize = 4 << 10;

    /// <summary>The largest chunk a sender may use; receivers accept messages up to <see cref="MaxMessageSize"/>.</summary>
    public const int MaxChunkSize = 4 << 20;

    /// <summary>The largest message either side accepts: a chunk of <see cref="MaxChunkSize"/> plus framing.</summary>
    public const int MaxMessageSize = MaxChunkSize + (64 << 10);

    /// <summary>Bodies up to this size are sent with the header and trailer in one write (no flush per message).</summary>
    public const long SmallObjectSize = 64 << 10;

    /// <summary>The method name a bulk connection's token is made for (no gRPC method has it).</summary>
    public const string BulkMethod = "/" + ServiceName + "/BulkGet";

    /// <summary>The gRPC service name.</summary>
    public const string ServiceName = "faascache.peer.CacheletPeer";
}
