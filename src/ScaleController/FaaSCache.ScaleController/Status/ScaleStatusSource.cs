namespace FaaSCache.ScaleController.Status;

/// <summary>Assembles the <see cref="ScaleStatusReport"/> from the pool, the decisions and the front door's traffic.</summary>
public sealed class ScaleStatusSource(
    ScaleControllerOptions options,
    IInstanceSource pool,
    ScaleCoordinator coordinator,
    ScaleDecisionState state,
    DecisionHistory history,
    FrontDoorTraffic traffic,
    KeepAliveStatusSource keepAlive)
{
    /// <summary>The status now.</summary>
    public ScaleStatusReport Read()
    {
        IReadOnlyList<ManagedInstance> instances = pool.Snapshot();
        return new(
            options.AppName,
            options.Instances.ToString().ToLowerInvariant(),
            instances.Count(i => i.State is InstanceState.Starting or InstanceState.Ready),
            state.DesiredInstances,
            state.IsActive,
            state.Reason,
            options.MinInstances,
            options.MaxInstances,
            traffic.Held,
            traffic.Pending,
            traffic.LastRequest,
            pool.MeasuredLoadTime?.TotalSeconds,
            pool.LoadTimeNote,
            coordinator.LastVotes,
            [.. instances.Select(i => new InstanceStatus(
                i.Id,
                i.State.ToString().ToLowerInvariant(),
                i.Process?.ProcessId,
                i.Process?.HttpEndpoint,
                i.PeerEndpoint,
                i.Process?.LoadTime.TotalSeconds,
                i.InFlight,
                i.LastVotes,
                i.Error))],
            history.Snapshot(),
            keepAlive.Read());
    }
}
