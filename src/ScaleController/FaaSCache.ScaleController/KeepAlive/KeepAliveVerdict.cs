namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>What a keep-alive policy wants for an idle app.</summary>
public enum KeepAliveAction
{
    /// <summary>Leave the count as it is.</summary>
    Keep,

    /// <summary>Unload: scale to the minimum (zero by default).</summary>
    Unload,

    /// <summary>Load (pre-warm): bring an unloaded app up before its predicted next invocation.</summary>
    Load,
}

/// <summary>A keep-alive policy's answer for an idle app.</summary>
/// <param name="Action">What it wants.</param>
/// <param name="Reason">Why, with the numbers.</param>
/// <param name="Windows">The windows it used (null for the fixed policy).</param>
/// <param name="HoldsLoaded">Whether the policy wants the app loaded now (its keep-alive runs): votes may then scale in, but not to zero.</param>
public sealed record KeepAliveVerdict(KeepAliveAction Action, string Reason, KeepAliveWindows? Windows = null, bool HoldsLoaded = false);
