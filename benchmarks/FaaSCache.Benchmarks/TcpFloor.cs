using System.Buffers.Binary;
using System.Net.Sockets;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The raw-TCP floor: <c>benchmarks/tools/tcp_floor_sender.py</c> in its own process holds random bytes in memory and
/// sends the first N of them over one loopback TCP connection per request (8-byte length in, N bytes out), which this
/// side reads into a preallocated array. Two processes, one socket, no framing, no checksum: the least a transfer of
/// N bytes between processes costs here. The sender exits when its stdin closes, so it never outlives the benchmark.
/// </summary>
internal sealed class TcpFloor : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly Socket _socket;
    private readonly NetworkStream _stream;
    private readonly byte[] _header = new byte[8];

    private TcpFloor(Process process, Socket socket)
    {
        _process = process;
        _socket = socket;
        _stream = new NetworkStream(socket, ownsSocket: false);
    }

    /// <summary>Gets the sender's process id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>
    /// Starts the sender with <paramref name="maxBytes"/> random bytes and connects to it: on loopback, or listening on
    /// <paramref name="address"/> inside the process wrapper <paramref name="wrap"/> gives (a network namespace).
    /// </summary>
    public static async Task<TcpFloor> StartAsync(long maxBytes, CancellationToken cancellationToken, IPAddress? address = null, Func<ProcessStartInfo, ProcessStartInfo>? wrap = null)
    {
        string script = Path.Combine(RepositoryRoot.Find(), "benchmarks", "tools", "tcp_floor_sender.py");
        var start = new ProcessStartInfo("/usr/bin/python3")
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.ArgumentList.Add(script);
        start.ArgumentList.Add(maxBytes.ToString(CultureInfo.InvariantCulture));
        address ??= IPAddress.Loopback;
        start.ArgumentList.Add(address.ToString());
        start = wrap?.Invoke(start) ?? start;
        Process process = Process.Start(start) ?? throw new InvalidOperationException("python3 did not start.");
        Socket? socket = null;
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timeout.CancelAfter(StartTimeout);
            string? line = await process.StandardOutput.ReadLineAsync(timeout.Token);
            if (line is null || !line.StartsWith("port ", StringComparison.Ordinal))
            {
                throw new InvalidOperationException($"{script} did not print its port: '{line}'; stderr: {await process.StandardError.ReadToEndAsync(timeout.Token)}");
            }

            int port = int.Parse(line.AsSpan(5), CultureInfo.InvariantCulture);
            socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            await socket.ConnectAsync(new IPEndPoint(address, port), timeout.Token);
            return new TcpFloor(process, socket);
        }
        catch
        {
            socket?.Dispose();
            await StopAsync(process);
            throw;
        }
    }

    /// <summary>Asks for <paramref name="target"/>.Length bytes and reads them into <paramref name="target"/>.</summary>
    public async ValueTask ReadAsync(Memory<byte> target, CancellationToken cancellationToken)
    {
        BinaryPrimitives.WriteInt64LittleEndian(_header, target.Length);
        await _stream.WriteAsync(_header, cancellationToken);
        await _stream.ReadExactlyAsync(target, cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        await _stream.DisposeAsync();
        _socket.Dispose();
        await StopAsync(_process);
    }

    private static async Task StopAsync(Process process)
    {
        try
        {
            process.StandardInput.Close();
            using var grace = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await process.WaitForExitAsync(grace.Token);
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or InvalidOperationException)
        {
            await ProcessTree.KillAsync(process, TimeSpan.FromSeconds(10));
        }
        finally
        {
            process.Dispose();
        }
    }
}
