using System.Net.Sockets;

namespace FaaSCache.Hosting;

/// <summary>
/// Free TCP ports, found by binding port 0 and releasing it: the one helper the host, the scale controller, the tools,
/// the tests and the benchmarks share. Another process may take the port before the caller binds it, so callers that
/// start a server retry on "address in use".
/// </summary>
public static class FreePorts
{
    /// <summary>Gets a port that is free on <paramref name="address"/> (127.0.0.1 when null) now.</summary>
    public static int Get(IPAddress? address = null)
    {
        using var listener = new TcpListener(address ?? IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>
    /// A free port that is none of <paramref name="taken"/>: ports chosen for a server before it binds any are free
    /// until then, so the kernel may hand the same one out twice.
    /// </summary>
    public static int GetOtherThan(IPAddress? address, params int[] taken)
    {
        ArgumentNullException.ThrowIfNull(taken);
        for (int attempt = 0; ; attempt++)
        {
            int port = Get(address);
            if (!taken.Contains(port) || attempt >= 100)
            {
                return port;
            }
        }
    }
}
