namespace FaaSCache.Peers;

/// <summary>How a failed peer call surfaces: not found, refused, corrupted, broken, late or unavailable.</summary>
public sealed partial class GrpcPeerClient
{
    private Exception Failure(string memberId, string key, string operation, Exception e, CancellationTokenSource? timeout, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return e as OperationCanceledException ?? new OperationCanceledException($"The {operation} of {key} from peer {memberId} was cancelled.", e, cancellationToken);
        }

        string message;
        switch (e)
        {
            case RpcException rpc when rpc.Trailers.GetValue(PeerFailureTrailer.Name) is PeerFailureTrailer.StorageUnavailable:
                return new StorageUnavailableException($"Owner {memberId} did not make the {operation} of {key}: {rpc.Status.Detail}", rpc) { Key = key };
            case RpcException rpc when rpc.Trailers.GetValue(PeerFailureTrailer.Name) is PeerFailureTrailer.LeaseLost:
                return new Caching.MembershipLeaseLostException($"Owner {memberId} did not make the {operation} of {key}: {rpc.Status.Detail}", rpc) { Key = key };
            case RpcException { StatusCode: StatusCode.NotFound } rpc:
                return new BlobNotFoundException($"Blob {key} does not exist (peer {memberId}: {rpc.Status.Detail})", rpc) { Key = key };
            case RpcException { StatusCode: StatusCode.AlreadyExists } rpc:
                return new BlobAlreadyExistsException($"Blob {key} already exists: owner {memberId} refused the create-only {operation} ({rpc.Status.Detail})", rpc) { Key = key };
            case RpcException { StatusCode: StatusCode.Unauthenticated or StatusCode.PermissionDenied } rpc:
                message = $"Peer {memberId} refused the {operation} of {key}: {rpc.Status.Detail}";
                break;
            case RpcException { StatusCode: StatusCode.DataLoss } rpc:
                message = $"Peer {memberId} received the {operation} of {key} corrupted and committed nothing: {rpc.Status.Detail}";
                break;
            case PeerTransferException { Failure: PeerTransferFailure.Corrupted } transfer:
                message = $"The {operation} of {key} from peer {memberId} arrived corrupted; nothing was kept: {transfer.Message}";
                break;
            case PeerTransferException { Failure: PeerTransferFailure.Refused } transfer:
                message = $"Peer {memberId} refused the {operation} of {key}: {transfer.Message}";
                break;
            case PeerTransferException { Failure: PeerTransferFailure.Protocol } transfer:
                message = $"Peer {memberId} broke the protocol in the {operation} of {key}: {transfer.Message}";
                break;
            case RpcException or PeerTransferException or OperationCanceledException when timeout?.IsCancellationRequested == true || e is RpcException { StatusCode: StatusCode.DeadlineExceeded }:
                message = $"Peer {memberId} did not answer the {operation} of {key} in time: {e.Message}";
                break;
            default:
                message = $"Peer {memberId} is unavailable for the {operation} of {key}: {e.Message}";
                break;
        }

        _logger.LogDebug(e, "{Message}", message);
        return new PeerUnavailableException(message, e) { MemberId = memberId, MayHaveArrived = !NeverArrived(e) };
    }

    /// <summary>True when the call provably did nothing at the peer: no connection was made, or the peer refused it.</summary>
    private static bool NeverArrived(Exception e)
    {
        if (e is RpcException { StatusCode: StatusCode.Unauthenticated or StatusCode.PermissionDenied or StatusCode.DataLoss })
        {
            return true;
        }

        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is System.Net.Sockets.SocketException
                {
                    SocketErrorCode: System.Net.Sockets.SocketError.ConnectionRefused or System.Net.Sockets.SocketError.HostNotFound
                        or System.Net.Sockets.SocketError.HostUnreachable or System.Net.Sockets.SocketError.NetworkUnreachable,
                })
            {
                return true;
            }
        }

        return e is RpcException rpc && rpc.Status.DebugException is { } debug && !ReferenceEquals(debug, e) && NeverArrived(debug);
    }
}
