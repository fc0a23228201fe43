namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// Where the controller's instances come from, and what a decision does to them: the seam between the one policy, one
/// aggregator and one status, and the two ways of running (<see cref="InstancePool"/> launches host processes;
/// <see cref="MembershipInstanceSource"/> finds the instances KEDA runs in the app's membership blob and only records the count).
/// </summary>
public interface IInstanceSource
{
    /// <summary>Gets the instance count the decisions are about (launch: starting or ready; membership: the count last decided).</summary>
    int LiveCount { get; }

    /// <summary>Gets the measured instance start time (T_Load, §4), or null when it is not known.</summary>
    TimeSpan? MeasuredLoadTime { get; }

    /// <summary>Gets, for the status, what <see cref="MeasuredLoadTime"/> is or why it is missing.</summary>
    string LoadTimeNote { get; }

    /// <summary>Gets the current instances and then the recently ended ones.</summary>
    IReadOnlyList<ManagedInstance> Snapshot();

    /// <summary>Gets the ready instances (the ones polled for votes).</summary>
    IReadOnlyList<ManagedInstance> Ready();

    /// <summary>Brings the instances up to date before a poll (membership: re-reads the blob; launch: nothing to read).</summary>
    Task RefreshAsync(CancellationToken cancellationToken);

    /// <summary>Carries out a decision for <paramref name="target"/> instances; returns at once.</summary>
    void ScaleTo(int target);

    /// <summary>Marks a ready instance that cannot serve any more (its process died) as failed and ends it.</summary>
    void Fail(ManagedInstance instance, string error);
}
