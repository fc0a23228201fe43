namespace FaaSCache.Peers;

/// <summary>One cached gRPC channel per peer endpoint, and the token on every call.</summary>
public sealed partial class GrpcPeerClient
{
    private DateTime Deadline() => DateTime.UtcNow + _options.CallTimeout;

    private Metadata Auth(string method) => new() { { PeerWire.AuthHeader, _key.CreateToken(method, _time.GetUtcNow()) } };

    private PeerChannel Channel(string memberId)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        ArgumentException.ThrowIfNullOrEmpty(memberId);
        if (!_directory.TryGetEndpoint(memberId, out Uri endpoint))
        {
            throw new PeerUnavailableException($"Peer {memberId} has no known endpoint (it is not a live member).") { MemberId = memberId, MayHaveArrived = false };
        }

        return _channels.GetOrAdd(endpoint, e => new Lazy<PeerChannel>(() => CreateChannel(e))).Value;
    }

    private PeerChannel CreateChannel(Uri endpoint)
    {
        var handler = new SocketsHttpHandler
        {
            // Several large gets to one peer should not share one connection's flow-control window.
            EnableMultipleHttp2Connections = true,
            ConnectTimeout = _options.ConnectTimeout,
            InitialHttp2StreamWindowSize = _options.InitialStreamWindowSize,
            KeepAlivePingDelay = TimeSpan.FromSeconds(15),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(10),
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.WithActiveRequests,
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
            AutomaticDecompression = System.Net.DecompressionMethods.None,
            UseProxy = false,
        };
        GrpcChannel channel = GrpcChannel.ForAddress(endpoint, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = PeerWire.MaxMessageSize,
            MaxSendMessageSize = PeerWire.MaxMessageSize,
        });
        CallInvoker invoker = channel.CreateCallInvoker();
        return new PeerChannel(endpoint, channel, invoker, new CacheletPeer.CacheletPeerClient(invoker));
    }
}
