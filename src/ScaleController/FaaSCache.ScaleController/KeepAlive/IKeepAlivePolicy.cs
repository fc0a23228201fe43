namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>When an idle app is unloaded (and, for the hybrid histogram, loaded again): the <see cref="ScalePolicy"/>'s idle rule (<c>--keep-alive</c>).</summary>
public interface IKeepAlivePolicy
{
    /// <summary>What an app with no request in flight should do now; <paramref name="started"/> stands in for a request never seen.</summary>
    KeepAliveVerdict Evaluate(PolicyInput input, DateTimeOffset started);
}
