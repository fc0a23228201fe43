using FaaSCache.ScaleController.Grpc;

namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// Every <see cref="ScaleControllerOptions.PollInterval"/>: refreshes the instance source (membership: re-reads the blob), asks each ready instance for its votes (GetVotes with the
/// live count and the measured T_Load, §4), hands them to the <see cref="ScaleCoordinator"/>, and fails an instance whose
/// process has died. A ready instance that does not answer (busy past the call's deadline, or hung) counts as voting
/// neither out nor in: the app scales in only when every instance wants in, and one whose votes are unknown may not (it
/// may be the one holding instances for a scaled load); it leaves the list when its process exits or its heartbeat goes
/// stale.
/// </summary>
public sealed class ScaleLoop(ScaleCoordinator coordinator, IInstanceSource pool, InstanceVoteClient votes, ScaleControllerOptions options, TimeProvider time, ILogger<ScaleLoop> logger) : BackgroundService
{
    /// <summary>The voter name of the abstention that stands for an instance that did not answer its poll.</summary>
    public const string UnansweredVoter = "poll";

    /// <summary>Polls once and decides; returns the decision.</summary>
    public async Task<ScaleDecision> PollOnceAsync(CancellationToken cancellationToken)
    {
        await pool.RefreshAsync(cancellationToken);
        IReadOnlyList<ManagedInstance> ready = pool.Ready();
        int workers = pool.LiveCount;
        double loadSeconds = pool.MeasuredLoadTime?.TotalSeconds ?? 0;
        votes.Retain(ready.Select(i => i.PeerEndpoint).OfType<Uri>());
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
        if (instance.PeerEndpoint is not { } peer)
        {
            return null;
        }

        try
        {
            InstanceVotes answer = await votes.GetVotesAsync(instance.Id, peer, workers, loadSeconds, cancellationToken);
            instance.LastVotes = answer;
            return answer;
        }
        catch (RpcException e)
        {
            if (instance.Process is { HasExited: true } process)
            {
                pool.Fail(instance, $"its process exited; last output:{Environment.NewLine}{process.OutputTail}");
                return null;
            }

            // A member that stopped answering leaves the list when its heartbeat goes stale; until then its votes are
            // unknown, which blocks a scale-in (not a scale-out that another instance asks for).
            logger.LogWarning("{Id} did not answer the poll: {Status}", instance.Id, e.Status);
            return new InstanceVotes(instance.Id, [new VoterVote(UnansweredVoter, 0, null, $"did not answer the poll ({e.StatusCode}): its votes are unknown")], 0, time.GetUtcNow());
        }
    }
}
