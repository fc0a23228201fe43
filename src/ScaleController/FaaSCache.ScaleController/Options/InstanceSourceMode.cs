namespace FaaSCache.ScaleController.Options;

/// <summary>Where the controller's instances come from (<c>--instances</c>).</summary>
public enum InstanceSourceMode
{
    /// <summary>The controller launches and stops FaaSCache host processes itself and routes <c>/api/*</c> to them.</summary>
    Launch,

    /// <summary>
    /// The controller only decides: it finds the instances in the app's membership blob, polls their votes and publishes
    /// the desired count (KEDA scales the Deployment); it launches, stops and routes nothing.
    /// </summary>
    Membership,
}
