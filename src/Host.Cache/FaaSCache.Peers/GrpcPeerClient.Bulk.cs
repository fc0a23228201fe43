using FaaSCache.Cluster;
using FaaSCache.Peers.Protocol;
using Grpc.Core;
using Grpc.Net.Client;

namespace FaaSCache.Peers;

/// <summary>The client half of bulk transfers (<see cref="PeerBulkServer"/>): large whole-object gets read beside gRPC.</summary>
public sealed partial class GrpcPeerClient
{
    /// <summary>How long a peer whose bulk port could not be reached gets its bodies over gRPC before bulk is tried again.</summary>
    private static readonly TimeSpan BulkRetryAfter = TimeSpan.FromMinutes(1);

    private bool BulkReachable(PeerChannel peer) => _time.GetUtcNow() >= peer.BulkUnreachableUntil;

    /// <summary>Opens the body the owner offered on its bulk port (a fresh token for <see cref="PeerWire.BulkMethod"/>, the call's ticket).</summary>
    private async Task<ChecksummedBodyStream> OpenBulkAsync(PeerChannel peer, GetRequest request, GetHeader header, IAsyncStreamReader<GetReplyFrame> replies, CancellationTokenSource timeout)
    {
        if (!request.Bulk || header.BulkTicket.Length != 16 || header.BulkPort is <= 0 or > 65535 || header.Length == 0)
        {
            throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer offered a bulk body (port {header.BulkPort}, ticket of {header.BulkTicket.Length} bytes) that was not asked for or is malformed.");
        }

        try
        {
            PeerBulkBodyStream body = await PeerBulkBodyStream.OpenAsync(
                peer.Endpoint.IdnHost,
                header.BulkPort,
                _key.CreateToken(PeerWire.BulkMethod, _time.GetUtcNow()),
                header.BulkTicket.Memory,
                header.Length,
                replies,
                timeout,
                _options.IdleTimeout,
                _options.ConnectTimeout).ConfigureAwait(false);
            Interlocked.Increment(ref _bulkGets);
            return body;
        }
        catch (PeerBulkUnreachableException)
        {
            peer.BulkUnreachableUntil = _time.GetUtcNow() + BulkRetryAfter;
            throw;
        }
    }

    /// <summary>Remembers the bulk port a peer's get header named; a new one (the peer restarted) is tried at once.</summary>
    private static void LearnBulkPort(PeerChannel peer, GetRequest request, GetHeader header)
    {
        if (request.Bulk && header.BulkPort is > 0 and <= 65535 && header.BulkPort != peer.BulkPort)
        {
            peer.BulkPort = header.BulkPort;
            peer.BulkUnreachableUntil = DateTimeOffset.MinValue;
        }
    }

    private sealed record PeerChannel(Uri Endpoint, GrpcChannel Channel, CallInvoker Invoker, CacheletPeer.CacheletPeerClient Client)
    {
        /// <summary>Gets or sets the time until which gets to this peer do not ask for bulk bodies.</summary>
        public DateTimeOffset BulkUnreachableUntil { get; set; } = DateTimeOffset.MinValue;

        /// <summary>Gets or sets the peer's bulk port, learned from a get's header (0: not known yet).</summary>
        public int BulkPort { get; set; }

        /// <summary>Gets the kept-open bulk connections nobody is using.</summary>
        public System.Collections.Concurrent.ConcurrentQueue<System.Net.Sockets.Socket> IdleBulk { get; } = new();
    }
}
