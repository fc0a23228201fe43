using FaaSCache.ResultCaching;

namespace FaaSCache.Peers;

/// <summary>Serves the function results this cachelet owns (result caching, location <c>cluster</c>).</summary>
public sealed partial class CacheletPeerService
{
    /// <inheritdoc />
    public override Task<ResultReply> GetResult(ResultRequest request, ServerCallContext context)
    {
        CheckResultKey(request.Key);
        CachedResult? result = _results?.Get(request.Key);
        return Task.FromResult(result is null ? new ResultReply { Found = false } : new ResultReply { Found = true, Result = UnsafeByteOperations.UnsafeWrap(result.Encode()) });
    }

    /// <inheritdoc />
    public override Task<PutResultReply> PutResult(PutResultRequest request, ServerCallContext context)
    {
        CheckResultKey(request.Key);
        if (_results is null)
        {
            return Task.FromResult(new PutResultReply { Kept = false });
        }

        if (request.TtlMs <= 0)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "A result is kept for a positive time."));
        }

        CachedResult result;
        try
        {
            result = CachedResult.Decode(request.Result.Memory);
        }
        catch (FormatException e)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, e.Message));
        }

        _results.Set(request.Key, result, TimeSpan.FromMilliseconds(request.TtlMs));
        return Task.FromResult(new PutResultReply { Kept = true });
    }

    private static void CheckResultKey(string key)
    {
        if (string.IsNullOrEmpty(key) || key.Length > 1024)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "A result key is 1 to 1024 characters."));
        }
    }
}
