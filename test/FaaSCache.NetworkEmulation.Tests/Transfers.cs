namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>
/// Bulk transfers over a namespace's link, measured where the bytes land: the test's own TCP endpoint on the host
/// address in the root namespace, and bash's /dev/tcp inside the namespace (iperf3 between two namespaces).
/// Every transfer is bounded by <see cref="Timeout"/>.
/// </summary>
internal static class Transfers
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>Root namespace to instance (what a read from storage does): bytes per second as the receiver got them.</summary>
    public static async Task<double> DownloadAsync(NetworkNamespace network, long bytes)
    {
        using var cts = new CancellationTokenSource(Timeout);
        await using var receiver = await ConnectFromAsync(network, tcp => $"exec 3<>{tcp} && cat <&3 >/dev/null", cts.Token);
        var socket = receiver.Socket;
        var started = TimeProvider.System.GetTimestamp();
        var block = new byte[1 << 20];
        for (var sent = 0L; sent < bytes; sent += block.Length)
        {
            await socket.SendAsync(block.AsMemory(0, (int)Math.Min(block.Length, bytes - sent)), cts.Token);
        }

        socket.Shutdown(SocketShutdown.Send);

        // The receiver closes its end only after it read everything: that is when the last byte arrived.
        Assert.Equal(0, await socket.ReceiveAsync(new byte[16], cts.Token));
        var elapsed = TimeProvider.System.GetElapsedTime(started);
        Assert.Equal(0, await receiver.Peer.WaitAsync(Timeout));
        return bytes / elapsed.TotalSeconds;
    }

    /// <summary>Instance to root namespace (what a write to storage does): bytes per second as the receiver got them.</summary>
    public static async Task<double> UploadAsync(NetworkNamespace network, long bytes)
    {
        using var cts = new CancellationTokenSource(Timeout);
        await using var sender = await ConnectFromAsync(network, tcp => string.Create(CultureInfo.InvariantCulture, $"head -c {bytes} /dev/zero >{tcp}"), cts.Token);
        var socket = sender.Socket;
        var started = TimeProvider.System.GetTimestamp();
        var block = new byte[1 << 20];
        var received = 0L;
        int read;
        while ((read = await socket.ReceiveAsync(block, cts.Token)) > 0)
        {
            received += read;
        }

        var elapsed = TimeProvider.System.GetElapsedTime(started);
        Assert.Equal(bytes, received);
        Assert.Equal(0, await sender.Peer.WaitAsync(Timeout));
        return bytes / elapsed.TotalSeconds;
    }

    /// <summary>One small message to the instance and back: the round-trip time over the link.</summary>
    public static async Task<TimeSpan> RoundTripAsync(NetworkNamespace network)
    {
        using var cts = new CancellationTokenSource(Timeout);
        await using var echo = await ConnectFromAsync(network, tcp => $"exec 3<>{tcp} && IFS= read -r line <&3 && printf '%s\\n' \"$line\" >&3", cts.Token);
        var socket = echo.Socket;
        var started = TimeProvider.System.GetTimestamp();
        await socket.SendAsync("ping\n"u8.ToArray(), cts.Token);
        var reply = new StringBuilder();
        var buffer = new byte[64];
        while (!reply.ToString().EndsWith('\n'))
        {
            var read = await socket.ReceiveAsync(buffer, cts.Token);
            Assert.True(read > 0, $"the echo closed before answering: {echo.Peer.Output}");
            reply.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        var elapsed = TimeProvider.System.GetElapsedTime(started);
        Assert.Equal("ping\n", reply.ToString());
        return elapsed;
    }

    /// <summary>Instance <paramref name="from"/> to instance <paramref name="to"/> (through the root namespace), with iperf3.</summary>
    public static async Task<double> InstanceToInstanceAsync(NetworkNamespace from, NetworkNamespace to, long bytes)
    {
        await using var server = await StartIperfServerAsync(to);
        await using var client = WrappedProcess.Start(from, "iperf3", "-c", to.InstanceAddress.ToString(), "-p", IperfPort,
            "-n", bytes.ToString(CultureInfo.InvariantCulture), "-J");
        Assert.True(await client.WaitAsync(Timeout) == 0, $"iperf3 -c failed: {client.Output}");
        using var report = JsonDocument.Parse(client.StandardOutput);
        return report.RootElement.GetProperty("end").GetProperty("sum_received").GetProperty("bits_per_second").GetDouble() / 8;
    }

    /// <summary>The port iperf3 servers listen on (inside their own namespace, so no other process competes for it).</summary>
    public const string IperfPort = "5299";

    /// <summary>Starts a one-off iperf3 server on the namespace's address and returns once it listens.</summary>
    public static async Task<WrappedProcess> StartIperfServerAsync(NetworkNamespace network)
    {
        var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var server = WrappedProcess.Start(network.Wrap(new System.Diagnostics.ProcessStartInfo("iperf3")
        {
            ArgumentList = { "-s", "-1", "--forceflush", "-B", network.InstanceAddress.ToString(), "-p", IperfPort },
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        }));
        server.OutputLine += line =>
        {
            if (line.Contains("Server listening", StringComparison.Ordinal))
            {
                ready.TrySetResult();
            }
        };
        if (server.StandardOutput.Contains("Server listening", StringComparison.Ordinal))
        {
            ready.TrySetResult();
        }

        await Task.WhenAny(ready.Task, server.Process.WaitForExitAsync()).WaitAsync(Timeout);
        if (!ready.Task.IsCompleted)
        {
            var output = server.Output;
            await server.DisposeAsync();
            Assert.Fail($"iperf3 -s did not start in {network.Name}: {output}");
        }

        return server;
    }

    /// <summary>
    /// Starts the bash <paramref name="script"/> inside the namespace, given the <c>/dev/tcp/&lt;host address&gt;/&lt;port&gt;</c>
    /// path of a listener in the root namespace, and accepts its connection there.
    /// </summary>
    private static async Task<Connection> ConnectFromAsync(NetworkNamespace network, Func<string, string> script, CancellationToken ct)
    {
        using var listener = new TcpListener(network.HostAddress, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var peer = WrappedProcess.Start(network, "bash", "-c", script($"/dev/tcp/{network.HostAddress}/{port}"));
        try
        {
            return new Connection(peer, await AcceptAsync(listener, peer, ct));
        }
        catch
        {
            await peer.DisposeAsync();
            throw;
        }
    }

    private static async Task<Socket> AcceptAsync(TcpListener listener, WrappedProcess peer, CancellationToken ct)
    {
        var accept = listener.AcceptSocketAsync(ct).AsTask();
        var exited = peer.Process.WaitForExitAsync(ct);
        if (await Task.WhenAny(accept, exited) != accept && exited.IsCompletedSuccessfully
            && await Task.WhenAny(accept, Task.Delay(TimeSpan.FromSeconds(2), ct)) != accept)
        {
            // A peer that connected and exited at once (a small upload) is still in the backlog; this one never connected.
            Assert.Fail($"the process in the namespace exited ({peer.Process.ExitCode}) before it connected: {peer.Output}");
        }

        return await accept;
    }
}

/// <summary>A process inside a namespace and the socket it connected to the root namespace with; dispose closes both.</summary>
internal sealed record Connection(WrappedProcess Peer, Socket Socket) : IAsyncDisposable
{
    public async ValueTask DisposeAsync()
    {
        Socket.Dispose();
        await Peer.DisposeAsync();
    }
}
