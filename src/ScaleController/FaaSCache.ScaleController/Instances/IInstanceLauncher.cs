namespace FaaSCache.ScaleController.Instances;

/// <summary>Starts one FaaSCache host instance of the app and returns once it is ready (its workers run).</summary>
public interface IInstanceLauncher
{
    /// <summary>Launches instance <paramref name="instanceId"/>; throws <see cref="InstanceStartException"/> when it fails or is not ready in time.</summary>
    Task<ILaunchedInstance> LaunchAsync(string instanceId, CancellationToken cancellationToken);
}

/// <summary>A running instance that a launcher started.</summary>
public interface ILaunchedInstance : IAsyncDisposable
{
    /// <summary>Gets the instance id (<c>&lt;app&gt;-N</c>).</summary>
    string Id { get; }

    /// <summary>Gets the instance's HTTP base address (triggers and admin).</summary>
    Uri HttpEndpoint { get; }

    /// <summary>Gets the instance's peer gRPC address (where it answers GetVotes).</summary>
    Uri PeerEndpoint { get; }

    /// <summary>Gets the measured time from launch to ready (T_Load, §4).</summary>
    TimeSpan LoadTime { get; }

    /// <summary>Gets the host's process id.</summary>
    int ProcessId { get; }

    /// <summary>Gets a value indicating whether the instance's process has exited.</summary>
    bool HasExited { get; }

    /// <summary>Gets the last lines the instance printed.</summary>
    string OutputTail { get; }

    /// <summary>Stops the instance: SIGTERM, then kill after <paramref name="timeout"/>; then cleans what it left (its shared memory).</summary>
    Task StopAsync(TimeSpan timeout);
}

/// <summary>An instance did not become ready.</summary>
public sealed class InstanceStartException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="InstanceStartException"/> class.</summary>
    public InstanceStartException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="InstanceStartException"/> class.</summary>
    public InstanceStartException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="InstanceStartException"/> class.</summary>
    public InstanceStartException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
