namespace FaaSCache.Bandwidth;

/// <summary>The controller's answer to an unrequested vote.</summary>
/// <param name="Accepted">False when the controller refused (e.g. already at its maximum).</param>
/// <param name="WorkerCount">The instance count the controller is bringing the app to.</param>
/// <param name="Reason">Why, in words.</param>
/// <param name="InstanceLoad">The controller's measured instance start time (T_Load), if it has one.</param>
public readonly record struct ScaleOutReply(bool Accepted, int WorkerCount, string Reason, TimeSpan? InstanceLoad);

/// <summary>
/// Sends an unrequested (urgent) vote to the scale controller (§4: "the cachelet immediately contacts the controller to
/// scale out to N"). Registered only when a controller is configured.
/// </summary>
public interface IScaleOutRequester
{
    /// <summary>Asks for <paramref name="targetInstances"/> instances now (the requester included).</summary>
    Task<ScaleOutReply> RequestAsync(string voter, int targetInstances, string reason, CancellationToken cancellationToken = default);
}
