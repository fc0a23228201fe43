namespace FaaSCache.Keda;

/// <summary>
/// What the scale controller has decided for one app, as the KEDA face reads it: the instance count the votes, the
/// bounds, the cool-down and the idle rule ask for now, and whether the app is active. Implemented by the controller.
/// </summary>
public interface IScaleDecisions
{
    /// <summary>Gets the app the controller scales.</summary>
    string AppName { get; }

    /// <summary>Gets the instance count the controller wants now (within minInstances..maxInstances; 0 when idle).</summary>
    int DesiredInstances { get; }

    /// <summary>Gets a value indicating whether the app is active: instances wanted, requests held or in flight.</summary>
    bool IsActive { get; }

    /// <summary>Gets the reason for the current decision, in words.</summary>
    string Reason { get; }

    /// <summary>Raised after <see cref="DesiredInstances"/> or <see cref="IsActive"/> changed (urgent votes included).</summary>
    event EventHandler? Changed;
}
