using Grpc.Core;
using Grpc.Core.Interceptors;

namespace FaaSCache.Cluster;

/// <summary>
/// Refuses peer calls that do not carry a fresh, unreplayed token made with the app's <see cref="PeerKey"/>:
/// <c>UNAUTHENTICATED</c> without a (well-formed) token, <c>PERMISSION_DENIED</c> for another key, an expired or a replayed token.
/// Runs before the service method, so a refused call never touches the cache.
/// </summary>
public sealed class PeerAuthInterceptor : Interceptor
{
    private readonly PeerKey _key;
    private readonly TimeSpan _skew;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly PeerReplayGuard _replays = new();

    /// <summary>Initializes a new instance of the <see cref="PeerAuthInterceptor"/> class.</summary>
    public PeerAuthInterceptor(IOptions<PeerServerOptions> options, TimeProvider? time = null, ILogger<PeerAuthInterceptor>? logger = null)
    {
        PeerServerOptions o = new PeerServerOptionsValidator().ThrowIfInvalid(options.Value);
        _key = o.Key!;
        _skew = o.MaxClockSkew;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <inheritdoc />
    public override Task<TResponse> UnaryServerHandler<TRequest, TResponse>(TRequest request, ServerCallContext context, UnaryServerMethod<TRequest, TResponse> continuation)
    {
        Authenticate(context);
        return continuation(request, context);
    }

    /// <inheritdoc />
    public override Task<TResponse> ClientStreamingServerHandler<TRequest, TResponse>(IAsyncStreamReader<TRequest> requestStream, ServerCallContext context, ClientStreamingServerMethod<TRequest, TResponse> continuation)
    {
        Authenticate(context);
        return continuation(requestStream, context);
    }

    /// <inheritdoc />
    public override Task ServerStreamingServerHandler<TRequest, TResponse>(TRequest request, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, ServerStreamingServerMethod<TRequest, TResponse> continuation)
    {
        Authenticate(context);
        return continuation(request, responseStream, context);
    }

    /// <inheritdoc />
    public override Task DuplexStreamingServerHandler<TRequest, TResponse>(IAsyncStreamReader<TRequest> requestStream, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, DuplexStreamingServerMethod<TRequest, TResponse> continuation)
    {
        Authenticate(context);
        return continuation(requestStream, responseStream, context);
    }

    private void Authenticate(ServerCallContext context)
    {
        DateTimeOffset now = _time.GetUtcNow();
        string? token = context.RequestHeaders.GetValue(PeerWire.AuthHeader);
        PeerTokenCheck check = _key.Verify(token, context.Method, now, _skew, out UInt128 nonce, out DateTimeOffset issued);
        if (check == PeerTokenCheck.Valid && !_replays.TryAccept(nonce, issued + _skew, now))
        {
            Refuse(context, StatusCode.PermissionDenied, "the token was already used (replay)");
        }

        switch (check)
        {
            case PeerTokenCheck.Valid:
                return;
            case PeerTokenCheck.Missing:
                Refuse(context, StatusCode.Unauthenticated, $"no {PeerWire.AuthHeader} token");
                break;
            case PeerTokenCheck.Malformed:
                Refuse(context, StatusCode.Unauthenticated, $"a malformed {PeerWire.AuthHeader} token");
                break;
            case PeerTokenCheck.Expired:
                Refuse(context, StatusCode.PermissionDenied, $"the token's time is more than {_skew} from ours");
                break;
            default:
                Refuse(context, StatusCode.PermissionDenied, "the token was not made with this app's peer key");
                break;
        }
    }

    private void Refuse(ServerCallContext context, StatusCode code, string reason)
    {
        _logger.LogWarning("Refused peer call {Method} from {Peer}: {Reason}", context.Method, context.Peer, reason);
        throw new RpcException(new Status(code, $"FaaSCache peer call refused: {reason}."));
    }
}
