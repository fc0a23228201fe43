namespace FaaSCache.Host.Workers;

/// <summary>Where a language's worker is in its life, as <c>GET /admin/host/status</c> reports it.</summary>
public enum WorkerState
{
    /// <summary>A process was started and has not finished its handshake (WorkerInit, FunctionLoad).</summary>
    Starting,

    /// <summary>The worker has loaded its functions and takes invocations.</summary>
    Running,

    /// <summary>The worker exited; the host starts another one after a back-off.</summary>
    Restarting,

    /// <summary>The worker exited before it was ready too often; the host does not start it again.</summary>
    Failed,

    /// <summary>The host is stopping and the worker was ended.</summary>
    Stopped,
}
