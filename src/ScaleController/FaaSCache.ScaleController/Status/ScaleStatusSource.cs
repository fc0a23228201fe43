using FaaSCache.ScaleController.Decisions;
using FaaSCache.ScaleController.FrontDoor;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;

namespace FaaSCache.ScaleController.Status;

/// <summary>Assembles the <see cref="ScaleStatusReport"/> from the pool, the decisions and the front door's traffic.</summary>
public sealed class ScaleStatusSource(
    ScaleControllerOptions options,
    InstancePool pool,
    ScaleCoordinator coordinator,
    ScaleDecisionState state,
    DecisionHistory history,
    FrontDoorTraffic traffic)
{
    /// <summary>The status now.</summary>
    public ScaleStatusReport Read() => new(
        options.AppName,
        pool.LiveCount,
        state.DesiredInstances,
        state.IsActive,
        state.Reason,
        options.MinInstances,
        options.MaxInstances,
        traffic.Held,
        traffic.Pending,
        traffic.LastRequest,
        pool.MeasuredLoadTime?.TotalSeconds,
        coordinator.LastVotes,
        [.. pool.Snapshot().Select(i => new InstanceStatus(
            i.Id,
            i.State.ToString().ToLowerInvariant(),
            i.Process?.ProcessId,
            i.Process?.HttpEndpoint,
            i.Process?.PeerEndpoint,
            i.Process?.LoadTime.TotalSeconds,
            i.InFlight,
            i.LastVotes,
            i.Error))],
        history.Snapshot());
}
