using FaaSCache.ScaleController.Grpc;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;
using Grpc.Core;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// Every <see cref="ScaleControllerOptions.PollInterval"/>: asks each ready instance for its votes (GetVotes with the
/// live count and the measured T_Load, §4), hands them to the <see cref="ScaleCoordinator"/>, and fails an instance whose
/// process has died.
/// </summary>
public sealed class ScaleLoop(ScaleCoordinator coordinator, InstancePool pool, InstanceVoteClient votes, ScaleControllerOptions options, TimeProvider time, ILogger<ScaleLoop> logger) : BackgroundService
{
    /// <summary>Polls once and decides; returns the decision.</summary>
    public async Task<ScaleDecision> PollOnceAsync(CancellationToken cancellationToken)
    {
        IReadOnlyList<ManagedInstance> ready = pool.Ready();
        int workers = pool.LiveCount;
        double loadSeconds = pool.MeasuredLoadTime?.TotalSeconds ?? 0;
        votes.Retain(ready.Select(i => i.Process?.PeerEndpoint).OfType<Uri>());
        InstanceVotes?[] answers = await Task.WhenAll(ready.Select(i => PollAsync(i, workers, loadSeconds, cancellationToken)));
        return coordinator.OnVotes([.. answers.OfType<InstanceVotes>()]);
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(options.PollInterval, time);
        do
        {
            try
            {
                await PollOnceAsync(stoppingToken);
            }
            catch (Exception e) when (e is not OperationCanceledException)
            {
                logger.LogError(e, "A poll failed");
            }
        }
        while (await timer.WaitForNextTickAsync(stoppingToken));
    }

    private async Task<InstanceVotes?> PollAsync(ManagedInstance instance, int workers, double loadSeconds, CancellationToken cancellationToken)
    {
        if (instance.Process is not { } process)
        {
            return null;
        }

        try
        {
            InstanceVotes answer = await votes.GetVotesAsync(process, workers, loadSeconds, cancellationToken);
            instance.LastVotes = answer;
            return answer;
        }
        catch (RpcException e)
        {
            if (process.HasExited)
            {
                pool.Fail(instance, $"its process exited; last output:{Environment.NewLine}{process.OutputTail}");
            }
            else
            {
                logger.LogWarning("{Id} did not answer the poll: {Status}", instance.Id, e.Status);
            }

            return null;
        }
    }
}
