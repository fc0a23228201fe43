using FaaSCache.ResultCaching;

namespace FaaSCache.Peers;

/// <summary>Function results kept by their key's owner (result caching, location <c>cluster</c>).</summary>
public sealed partial class GrpcPeerClient : IResultPeers
{
    private const string GetResultMethod = "/" + PeerWire.ServiceName + "/GetResult";
    private const string PutResultMethod = "/" + PeerWire.ServiceName + "/PutResult";

    /// <inheritdoc />
    public async Task<byte[]?> GetResultAsync(string memberId, string key, CancellationToken cancellationToken)
    {
        PeerChannel peer = Channel(memberId);
        try
        {
            ResultReply reply = await peer.Client.GetResultAsync(new ResultRequest { Key = key }, Auth(GetResultMethod), Deadline(), cancellationToken).ConfigureAwait(false);
            return reply.Found ? reply.Result.ToByteArray() : null;
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "result get", e, null, cancellationToken);
        }
    }

    /// <inheritdoc />
    public async Task<bool> PutResultAsync(string memberId, string key, byte[] result, TimeSpan ttl, CancellationToken cancellationToken)
    {
        PeerChannel peer = Channel(memberId);
        try
        {
            var request = new PutResultRequest { Key = key, Result = UnsafeByteOperations.UnsafeWrap(result), TtlMs = (long)ttl.TotalMilliseconds };
            PutResultReply reply = await peer.Client.PutResultAsync(request, Auth(PutResultMethod), Deadline(), cancellationToken).ConfigureAwait(false);
            return reply.Kept;
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "result put", e, null, cancellationToken);
        }
    }
}
