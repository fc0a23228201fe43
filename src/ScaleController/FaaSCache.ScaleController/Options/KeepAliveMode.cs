namespace FaaSCache.ScaleController.Options;

/// <summary>How the controller decides when an idle app unloads (<c>--keep-alive</c>).</summary>
public enum KeepAliveMode
{
    /// <summary>Unload after <see cref="ScaleControllerOptions.IdleToZero"/> without a request; never pre-warm.</summary>
    Fixed,

    /// <summary>The hybrid histogram (§3.3): unload after the keep-alive window, reload at the pre-warm time; state kept in a blob.</summary>
    Histogram,
}
