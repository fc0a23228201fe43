namespace FaaSCache.ScaleController.Instances;

/// <summary>Where an instance's process runs on the network: what it binds to, how it reaches the controller and storage.</summary>
public interface IInstanceNetwork
{
    /// <summary>Prepares the network of one instance (released when the instance has stopped).</summary>
    Task<InstanceNetworkLease> AcquireAsync(string instanceId, CancellationToken cancellationToken);
}

/// <summary>One instance's network.</summary>
/// <param name="BindAddress">The address the instance listens on (HTTP and peer) and is reached at.</param>
/// <param name="ControllerAddress">The address at which the instance reaches the controller's gRPC port.</param>
/// <param name="StorageConnection">The storage connection string as the instance must use it.</param>
/// <param name="Wrap">Turns the host's start info into one that runs where this network is.</param>
/// <param name="Release">Removes what <see cref="IInstanceNetwork.AcquireAsync"/> made.</param>
/// <param name="Description">The network in words, for the logs.</param>
public sealed record InstanceNetworkLease(
    IPAddress BindAddress,
    IPAddress ControllerAddress,
    string StorageConnection,
    Func<ProcessStartInfo, ProcessStartInfo> Wrap,
    Func<ValueTask> Release,
    string Description);

/// <summary>Every instance on the controller's own address (the default): nothing to make or remove.</summary>
public sealed class SharedNetwork(IPAddress listenAddress, string storageConnection) : IInstanceNetwork
{
    /// <inheritdoc />
    public Task<InstanceNetworkLease> AcquireAsync(string instanceId, CancellationToken cancellationToken)
    {
        IPAddress address = listenAddress.Equals(IPAddress.Any) ? IPAddress.Loopback : listenAddress;
        return Task.FromResult(new InstanceNetworkLease(address, address, storageConnection, s => s, () => ValueTask.CompletedTask, "shared network"));
    }
}
