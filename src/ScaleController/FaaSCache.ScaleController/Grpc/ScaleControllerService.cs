using FaaSCache.Scaling.Protocol;

namespace FaaSCache.ScaleController.Grpc;

/// <summary>
/// Scale.proto's <c>ScaleController</c>: an instance's unrequested (urgent) vote, e.g. a large miss that wants more
/// instances for a bandwidth-scaled load now (§4). Behind the peer key's interceptor: a call without a valid token of
/// the app is refused before it gets here.
/// </summary>
internal sealed class ScaleControllerService(ScaleCoordinator coordinator, IInstanceSource pool, ScaleControllerOptions options) : FaaSCache.Scaling.Protocol.ScaleController.ScaleControllerBase
{
    public override Task<UrgentVoteReply> ReportVote(UrgentVote request, ServerCallContext context)
    {
        if (!string.Equals(request.App, options.AppName, StringComparison.OrdinalIgnoreCase))
        {
            throw new RpcException(new global::Grpc.Core.Status(StatusCode.InvalidArgument, $"This controller scales '{options.AppName}', not '{request.App}'."));
        }

        if (request.TargetWorkerCount < 1)
        {
            throw new RpcException(new global::Grpc.Core.Status(StatusCode.InvalidArgument, $"target_worker_count {request.TargetWorkerCount} must be at least 1."));
        }

        UrgentDecision urgent = coordinator.OnUrgentVote(request.InstanceId, request.Voter, request.TargetWorkerCount, request.Reason);
        return Task.FromResult(new UrgentVoteReply
        {
            Accepted = urgent.Accepted,
            WorkerCount = urgent.Decision.To,
            Reason = urgent.Decision.Reason,
            InstanceLoadSeconds = pool.MeasuredLoadTime?.TotalSeconds ?? 0,
        });
    }
}
