using Grpc.Core;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Host.Workers;

/// <summary>The host side of FunctionRpc: each worker opens one EventStream, first sending StartStream.</summary>
public sealed class FunctionRpcService(WorkerRegistry registry, ILogger<FunctionRpcService> logger) : FunctionRpc.FunctionRpcBase
{
    /// <inheritdoc />
    public override async Task EventStream(IAsyncStreamReader<StreamingMessage> requestStream, IServerStreamWriter<StreamingMessage> responseStream, ServerCallContext context)
    {
        if (!await requestStream.MoveNext(context.CancellationToken).ConfigureAwait(false))
        {
            return;
        }

        StreamingMessage first = requestStream.Current;
        if (first.ContentCase != StreamingMessage.ContentOneofCase.StartStream)
        {
            throw new Grpc.Core.RpcException(new Status(StatusCode.InvalidArgument, $"The first message must be StartStream, not {first.ContentCase}."));
        }

        if (!registry.TryGet(first.StartStream.WorkerId, out WorkerChannel channel))
        {
            logger.LogWarning("A worker with unknown id {WorkerId} tried to connect", first.StartStream.WorkerId);
            throw new Grpc.Core.RpcException(new Status(StatusCode.NotFound, $"Unknown worker id '{first.StartStream.WorkerId}'."));
        }

        await channel.RunAsync(first.RequestId, requestStream, responseStream, context.CancellationToken).ConfigureAwait(false);
    }
}
