using FaaSCache.Scaling.Protocol;
using Grpc.Core;

namespace FaaSCache.Scaling.Grpc;

/// <summary>
/// The vote service the scale controller polls (Scale.proto's <c>InstanceScale</c>), on the peer port, behind the peer
/// key. Each query also brings the controller's measured instance start time, T_Load, into the transfer profile.
/// </summary>
internal sealed class InstanceScaleService(ScaleVoteAggregator aggregator, TransferProfiler profiler) : InstanceScale.InstanceScaleBase
{
    public override async Task<VoteReport> GetVotes(VoteQuery request, ServerCallContext context)
    {
        if (request.WorkerCount < 0)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"worker_count {request.WorkerCount} is negative."));
        }

        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(request.InstanceLoadSeconds));
        InstanceVotes votes = await aggregator.VoteAsync(request.WorkerCount).ConfigureAwait(false);
        var report = new VoteReport { InstanceId = votes.InstanceId, InFlight = votes.InFlight };
        foreach (VoterResult r in votes.Voters)
        {
            var vote = new Vote { Voter = r.Voter, Vote_ = (int)r.Vote, Reason = r.Reason };
            if (r.TargetWorkerCount is { } target)
            {
                vote.TargetWorkerCount = target;
            }

            foreach ((string name, double value) in r.Metrics)
            {
                vote.Metrics[name] = value;
            }
            report.Votes.Add(vote);
        }

        return report;
    }
}
