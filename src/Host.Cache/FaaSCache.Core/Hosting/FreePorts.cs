using System.Net;
using System.Net.Sockets;

namespace FaaSCache.ScaleController.Instances;

/// <summary>Free TCP ports, found by binding port 0 and releasing it (the caller binds it right after).</summary>
public static class FreePorts
{
    /// <summary>Gets a port that is free on <paramref name="address"/> now.</summary>
    public static int Get(IPAddress address)
    {
        using var listener = new TcpListener(address, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
