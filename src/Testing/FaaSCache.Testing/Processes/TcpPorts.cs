namespace FaaSCache.Testing;

/// <summary>Loopback TCP port checks for fixtures that start real servers (a free port: <see cref="Hosting.FreePorts"/>).</summary>
public static class TcpPorts
{
    /// <summary>True when nothing listens on 127.0.0.1:<paramref name="port"/> (it can be bound).</summary>
    public static bool IsFree(int port)
    {
        try
        {
            using var listener = new TcpListener(IPAddress.Loopback, port);
            listener.Start();
            listener.Stop();
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>True when a TCP connection to 127.0.0.1:<paramref name="port"/> succeeds within <paramref name="timeout"/>.</summary>
    public static async Task<bool> IsAcceptingAsync(int port, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        using var client = new TcpClient();
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        cts.CancelAfter(timeout);
        try
        {
            await client.ConnectAsync(IPAddress.Loopback, port, cts.Token);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }
}
