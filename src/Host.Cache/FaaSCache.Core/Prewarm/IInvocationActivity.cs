namespace FaaSCache.Prewarm;

/// <summary>
/// Whether the instance's functions are executing: pre-warm yields to invocations (§3.3). The scaling component's
/// invocation meter provides it in both hosts (the FaaSCache host's invoker and the WebJobs face's filter feed it).
/// </summary>
public interface IInvocationActivity
{
    /// <summary>Gets the invocations executing now.</summary>
    int InFlight { get; }

    /// <summary>Raised after an invocation starts or ends (read <see cref="InFlight"/> for the count now).</summary>
    event EventHandler? InFlightChanged;
}
