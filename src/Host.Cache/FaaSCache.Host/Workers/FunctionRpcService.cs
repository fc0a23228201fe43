namespace FaaSCache.Host.Workers;

/// <summary>
/// The host side of FunctionRpc: each worker opens one EventStream, first sending StartStream. A stream is accepted only
/// for a worker id the host started whose stream is not attached yet: the id is on the worker's command line, which
/// every local user can read, so a second stream for it is refused and the first one is left untouched.
/// </summary>
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

        string workerId = first.StartStream.WorkerId;
        if (!registry.TryGet(workerId, out WorkerChannel channel))
        {
            logger.LogWarning("Refused an EventStream from {Peer}: worker id {WorkerId} is not one this host started", context.Peer, workerId);
            throw new Grpc.Core.RpcException(new Status(StatusCode.NotFound, $"Unknown worker id '{workerId}': only a worker process this host started may open a stream, with the id it was given."));
        }

        if (!channel.TryClaimStream())
        {
            logger.LogWarning(
                "Refused a second EventStream for worker {WorkerId} (pid {Pid}) from {Peer}: that worker's stream is already attached; the first stream keeps running",
                workerId, channel.ProcessId, context.Peer);
            throw new Grpc.Core.RpcException(new Status(
                StatusCode.AlreadyExists,
                $"Worker id '{workerId}' already has a stream: each worker process the host started may open one EventStream, once; this one is refused."));
        }

        await channel.RunAsync(first.RequestId, requestStream, responseStream, context.CancellationToken).ConfigureAwait(false);
    }
}
