using System.Buffers;
using System.Net.Sockets;
using System.Threading.Channels;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// A network link to a server at a distance, in user space: a TCP relay on loopback in front of the server that
/// delivers every byte half a round trip later in each direction, and at most <c>bytesPerSecond</c> per direction of
/// each connection, as a link with that latency and rate would (netem does this in the kernel; this machine's kernel has
/// no netem). Protocol-agnostic: HTTP keep-alive, pipelining and large bodies pass unchanged, each response's first
/// byte arriving one round trip later than from the server itself. Used to put Azurite "in another building" for the
/// benchmarks (<c>--storage-distance</c>); a probe through it measures what it claims.
/// </summary>
public sealed class DelayLink : IAsyncDisposable
{
    private const int ChunkBytes = 256 * 1024;

    /// <summary>
    /// A chunk that the rate holds back less than this leaves at once: a timer cannot wait less than about a millisecond,
    /// and sleeping for every chunk capped the rate far below the link's (32 MB/s on a 90 MB/s link, then 53 MB/s with
    /// 2 ms). The rate then holds on average, in bursts of at most this long; the propagation delay is always waited.
    /// </summary>
    private static readonly long Slack = Stopwatch.Frequency / 100; // 10 ms
    private readonly TcpListener _listener;
    private readonly IPEndPoint _upstream;
    private long _oneWayTicks;
    private readonly long? _bytesPerSecond;
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _connections = [];
    private readonly Lock _gate = new();
    private readonly Task _accepting;

    private DelayLink(TcpListener listener, IPEndPoint upstream, TimeSpan roundTrip, long? bytesPerSecond)
    {
        _listener = listener;
        _upstream = upstream;
        RoundTrip = roundTrip;
        _oneWayTicks = (long)(roundTrip.TotalSeconds / 2 * Stopwatch.Frequency);
        _bytesPerSecond = bytesPerSecond;
        Endpoint = (IPEndPoint)listener.LocalEndpoint;
        _accepting = Task.Run(AcceptAsync);
    }

    /// <summary>Gets the link's own end: connect here instead of to the server.</summary>
    public IPEndPoint Endpoint { get; }

    /// <summary>Gets the round-trip time the link adds (what it was set to; timers make the real one a little longer).</summary>
    public TimeSpan RoundTrip { get; private set; }

    /// <summary>Changes the round trip for what is sent from now on (to tune the link to a measured target).</summary>
    public void Retune(TimeSpan roundTrip)
    {
        if (roundTrip < TimeSpan.Zero || roundTrip > TimeSpan.FromSeconds(10))
        {
            throw new ArgumentOutOfRangeException(nameof(roundTrip), roundTrip, "The round trip a link adds must be between 0 and 10 s.");
        }

        RoundTrip = roundTrip;
        Volatile.Write(ref _oneWayTicks, (long)(roundTrip.TotalSeconds / 2 * Stopwatch.Frequency));
    }

    /// <summary>Gets the rate cap per direction of each connection (bytes/s), or null for none.</summary>
    public long? BytesPerSecond => _bytesPerSecond;

    /// <summary>Starts a link to <paramref name="upstream"/> on a free loopback port.</summary>
    public static DelayLink Start(IPEndPoint upstream, TimeSpan roundTrip, long? bytesPerSecond = null)
    {
        ArgumentNullException.ThrowIfNull(upstream);
        if (roundTrip < TimeSpan.Zero || roundTrip > TimeSpan.FromSeconds(10))
        {
            throw new ArgumentOutOfRangeException(nameof(roundTrip), roundTrip, "The round trip a link adds must be between 0 and 10 s.");
        }

        if (bytesPerSecond is <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(bytesPerSecond), bytesPerSecond, "A link's rate must be positive (bytes per second), or null for none.");
        }

        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start(512);
        return new DelayLink(listener, upstream, roundTrip, bytesPerSecond);
    }

    /// <summary>Stops accepting, closes every connection through the link and waits for them.</summary>
    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        _listener.Stop();
        try
        {
            await _accepting.ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
        }

        Task[] open;
        lock (_gate)
        {
            open = [.. _connections];
        }

        await Task.WhenAll(open).ConfigureAwait(false);
        _stopping.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await _listener.AcceptSocketAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            Task connection = Task.Run(() => RelayAsync(client));
            lock (_gate)
            {
                _connections.RemoveAll(t => t.IsCompleted);
                _connections.Add(connection);
            }
        }
    }

    private async Task RelayAsync(Socket client)
    {
        using (client)
        using (var server = new Socket(_upstream.AddressFamily, SocketType.Stream, ProtocolType.Tcp))
        {
            client.NoDelay = true;
            server.NoDelay = true;
            using var closing = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
            try
            {
                await server.ConnectAsync(_upstream, closing.Token).ConfigureAwait(false);
                Task up = PumpAsync(client, server, closing.Token);
                Task down = PumpAsync(server, client, closing.Token);
                await Task.WhenAny(up, down).ConfigureAwait(false);
                // One side is done: let the other finish delivering what is in flight, then close both.
                await Task.WhenAll(up, down).WaitAsync(TimeSpan.FromSeconds(30), closing.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or IOException or TimeoutException or ObjectDisposedException)
            {
            }
            finally
            {
                await closing.CancelAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>Reads from <paramref name="from"/> as fast as it sends, and delivers each chunk to <paramref name="to"/> when it is due.</summary>
    private async Task PumpAsync(Socket from, Socket to, CancellationToken cancellationToken)
    {
        var inFlight = Channel.CreateUnbounded<(byte[] Buffer, int Count, long Due)>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
        Task deliver = DeliverAsync(inFlight.Reader, to, cancellationToken);
        try
        {
            while (true)
            {
                byte[] buffer = ArrayPool<byte>.Shared.Rent(ChunkBytes);
                int read = await from.ReceiveAsync(buffer.AsMemory(0, ChunkBytes), SocketFlags.None, cancellationToken).ConfigureAwait(false);
                if (read == 0)
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    break;
                }

                inFlight.Writer.TryWrite((buffer, read, Stopwatch.GetTimestamp() + Volatile.Read(ref _oneWayTicks)));
            }
        }
        finally
        {
            inFlight.Writer.TryComplete();
            await deliver.ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Waits until the Stopwatch reads <paramref name="at"/>, to a fraction of a millisecond: a timer for all but the last
    /// 3 ms (Task.Delay counts whole milliseconds and wakes up to a few late under load), then yielding until it is time.
    /// </summary>
    private static async Task WaitUntilAsync(long at, CancellationToken cancellationToken)
    {
        double ms = (double)(at - Stopwatch.GetTimestamp()) * 1000 / Stopwatch.Frequency;
        if (ms > 4)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(Math.Floor(ms - 3)), cancellationToken).ConfigureAwait(false);
        }

        while (Stopwatch.GetTimestamp() < at)
        {
            cancellationToken.ThrowIfCancellationRequested();
            await Task.Yield();
        }
    }

    private async Task DeliverAsync(ChannelReader<(byte[] Buffer, int Count, long Due)> inFlight, Socket to, CancellationToken cancellationToken)
    {
        long nextFree = 0;
        bool open = true;
        await foreach ((byte[] buffer, int count, long due) in inFlight.ReadAllAsync(CancellationToken.None).ConfigureAwait(false))
        {
            try
            {
                if (!open || cancellationToken.IsCancellationRequested)
                {
                    continue;
                }

                // The link's delay, then its rate: a chunk leaves no earlier than the previous one freed the link.
                long at = Math.Max(due, nextFree);
                long wait = at - Stopwatch.GetTimestamp();
                if (wait > Slack || (wait > 0 && at == due))
                {
                    // The propagation delay is always waited out; the rate only when the link is more than a burst ahead.
                    await WaitUntilAsync(at, cancellationToken).ConfigureAwait(false);
                }

                if (_bytesPerSecond is long rate)
                {
                    nextFree = Math.Max(at, Stopwatch.GetTimestamp()) + (long)((double)count / rate * Stopwatch.Frequency);
                }

                int sent = 0;
                while (sent < count)
                {
                    sent += await to.SendAsync(buffer.AsMemory(sent, count - sent), SocketFlags.None, cancellationToken).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                open = false;
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }

        if (open)
        {
            try
            {
                to.Shutdown(SocketShutdown.Send);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
            }
        }
    }
}
