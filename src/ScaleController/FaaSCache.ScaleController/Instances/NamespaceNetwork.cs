using FaaSCache.NetworkEmulation;

namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// Each instance in its own network namespace behind a veth link shaped to <see cref="ScaleControllerOptions.LinkRateBytesPerSecond"/>
/// (§6: each VM reaches storage over its own ~90 MB/s link). The instance listens on the namespace's address and
/// reaches the controller and storage at the link's root-side address (so both must listen on 0.0.0.0). Namespace
/// indexes (the third octet of 10.250.x.0/30) are reused once an instance is gone.
/// </summary>
public sealed class NamespaceNetwork(ScaleControllerOptions options) : IInstanceNetwork
{
    private readonly Lock _gate = new();
    private readonly HashSet<int> _used = [];

    /// <inheritdoc />
    public async Task<InstanceNetworkLease> AcquireAsync(string instanceId, CancellationToken cancellationToken)
    {
        int index = Take();
        var link = new ShapedLinkOptions { RateBytesPerSecond = options.LinkRateBytesPerSecond };
        NetworkNamespace ns;
        try
        {
            ns = await NetworkNamespace.CreateAsync(options.NamespacePrefix, index, link, cancellationToken);
        }
        catch
        {
            Give(index);
            throw;
        }

        return new InstanceNetworkLease(
            ns.InstanceAddress,
            ns.HostAddress,
            RewriteStorage(options.StorageConnection, ns.HostAddress),
            ns.Wrap,
            async () =>
            {
                try
                {
                    await ns.DisposeAsync();
                }
                finally
                {
                    Give(index);
                }
            },
            ns.ToString());
    }

    /// <summary>Points a loopback storage endpoint (Azurite on this machine) at <paramref name="host"/>, the address the namespace reaches it at.</summary>
    public static string RewriteStorage(string connection, IPAddress host)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(host);
        return connection.Replace("//127.0.0.1:", $"//{host}:", StringComparison.Ordinal).Replace("//localhost:", $"//{host}:", StringComparison.OrdinalIgnoreCase);
    }

    private int Take()
    {
        lock (_gate)
        {
            for (int i = 1; i <= 255; i++)
            {
                if (_used.Add(i))
                {
                    return i;
                }
            }
        }

        throw new InvalidOperationException("Every namespace index 1..255 is in use.");
    }

    private void Give(int index)
    {
        lock (_gate)
        {
            _used.Remove(index);
        }
    }
}
