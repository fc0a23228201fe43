using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace FaaSCache.Peers;

/// <summary>
/// §3.2, large bodies beside gRPC: a raw TCP listener (one per local address the peer service is called on, on a free
/// port) that sends a whole object's bytes straight from the owner's map into the socket, hashing them in the same pass,
/// then their XxHash3. A get's gRPC call hands the caller a one-time ticket (<see cref="Offer"/>); the caller connects,
/// presents a fresh <see cref="PeerKey"/> token for <see cref="PeerWire.BulkMethod"/> and the ticket, and reads. Against
/// gRPC this saves the HTTP/2 framing and most copies (map → Kestrel pipe → frames → kernel → HttpClient buffers → gRPC
/// message → map); what is left is the kernel's copy on each side and the requester's pwrite into its map.
/// </summary>
/// <remarks>
/// Wire (request): "FCB1", token length (uint16, big-endian), the token (ASCII), the 16-byte ticket. Reply: one status
/// byte (<see cref="StatusOk"/>, <see cref="StatusRefused"/>, <see cref="StatusUnknownTicket"/>); after OK the body's
/// bytes and their XxHash3 (uint64, little-endian). One transfer per connection.
/// </remarks>
public sealed class PeerBulkServer : IAsyncDisposable
{
    internal const byte StatusOk = 0;
    internal const byte StatusRefused = 1;
    internal const byte StatusUnknownTicket = 2;
    internal const int MaxTokenLength = 512;
    internal static readonly byte[] Magic = "FCB1"u8.ToArray();

    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);

    private readonly PeerKey _key;
    private readonly TimeSpan _skew;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly PeerReplayGuard _replays = new();
    private readonly ConcurrentDictionary<IPAddress, Lazy<Socket>> _listeners = new();
    private readonly ConcurrentDictionary<UInt128, PeerBulkOffer> _offers = new();
    private readonly CancellationTokenSource _stopping = new();
    private int _disposed;

    /// <summary>Initializes a new instance of the <see cref="PeerBulkServer"/> class.</summary>
    /// <param name="options">The peer service's options (key, clock skew).</param>
    /// <param name="time">Clock for tokens.</param>
    /// <param name="logger">Logger.</param>
    public PeerBulkServer(IOptions<PeerServerOptions> options, TimeProvider? time = null, ILogger<PeerBulkServer>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        PeerServerOptions o = options.Value;
        o.Validate();
        _key = o.Key!;
        _skew = o.MaxClockSkew;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <summary>Gets the number of transfers offered and not yet claimed or withdrawn.</summary>
    internal int PendingOffers => _offers.Count;

    /// <summary>Gets or sets a fault injector for tests: given a slice's offset and bytes, the bytes that go on the wire (it may also wait or throw).</summary>
    internal Func<long, ReadOnlyMemory<byte>, CancellationToken, ValueTask<ReadOnlyMemory<byte>>>? Tamper { get; set; }

    /// <summary>Listens on <paramref name="local"/> (once; later calls return the same port) and returns the port.</summary>
    internal int Listen(IPAddress local)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (local.IsIPv4MappedToIPv6)
        {
            local = local.MapToIPv4();
        }

        Lazy<Socket> listener = _listeners.GetOrAdd(local, a => new Lazy<Socket>(() => StartListener(a)));
        try
        {
            return ((IPEndPoint)listener.Value.LocalEndPoint!).Port;
        }
        catch
        {
            _listeners.TryRemove(new KeyValuePair<IPAddress, Lazy<Socket>>(local, listener));
            throw;
        }
    }

    /// <summary>Registers a transfer for the caller of one get; it ends when the caller has been sent everything, or fails.</summary>
    internal PeerBulkOffer Offer(ReadOnlyMemory<byte> content, Func<long, CancellationToken, ValueTask<long>>? waitFor, Func<Task>? beforeTrailer, CancellationToken callAborted)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        while (true)
        {
            var offer = new PeerBulkOffer(content, waitFor, beforeTrailer, callAborted);
            if (_offers.TryAdd(offer.Ticket, offer))
            {
                return offer;
            }
        }
    }

    /// <summary>Removes an offer nobody claimed (true); false when a transfer took it (await its completion then).</summary>
    internal bool Withdraw(PeerBulkOffer offer)
    {
        if (!_offers.TryRemove(new KeyValuePair<UInt128, PeerBulkOffer>(offer.Ticket, offer)))
        {
            return false;
        }

        offer.Abandon();
        return true;
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        foreach (Lazy<Socket> listener in _listeners.Values)
        {
            if (listener.IsValueCreated)
            {
                listener.Value.Dispose();
            }
        }

        foreach (PeerBulkOffer offer in _offers.Values)
        {
            offer.Abandon();
        }

        _listeners.Clear();
        _offers.Clear();
        _stopping.Dispose();
    }

    private Socket StartListener(IPAddress local)
    {
        var socket = new Socket(local.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            socket.Bind(new IPEndPoint(local, 0));
            socket.Listen(128);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        _logger.LogDebug("Bulk transfers listen on {Endpoint}", socket.LocalEndPoint);
        _ = AcceptLoopAsync(socket);
        return socket;
    }

    private async Task AcceptLoopAsync(Socket listener)
    {
        CancellationToken stopping = _stopping.Token;
        while (!stopping.IsCancellationRequested)
        {
            Socket connection;
            try
            {
                connection = await listener.AcceptAsync(stopping).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                if (!stopping.IsCancellationRequested)
                {
                    _logger.LogWarning(e, "The bulk listener on {Endpoint} stopped", listener.LocalEndPoint);
                }

                return;
            }

            _ = ServeAsync(connection, stopping);
        }
    }

    private async Task ServeAsync(Socket connection, CancellationToken stopping)
    {
        using (connection)
        {
            try
            {
                connection.NoDelay = true;
                PeerBulkOffer? offer = await ReadRequestAsync(connection, stopping).ConfigureAwait(false);
                if (offer is not null)
                {
                    await offer.SendAsync(connection, Tamper, stopping).ConfigureAwait(false);
                    connection.Shutdown(SocketShutdown.Send);
                }
            }
            catch (Exception e) when (e is SocketException or IOException or OperationCanceledException or ObjectDisposedException)
            {
                _logger.LogDebug(e, "A bulk transfer to {Peer} ended early", SafeRemote(connection));
            }
        }
    }

    /// <summary>Reads and checks a request; answers a refusal itself and returns null, else returns the claimed offer.</summary>
    private async Task<PeerBulkOffer?> ReadRequestAsync(Socket connection, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(RequestTimeout);
        byte[] head = new byte[Magic.Length + 2];
        await ReceiveExactlyAsync(connection, head, timeout.Token).ConfigureAwait(false);
        int tokenLength = BinaryPrimitives.ReadUInt16BigEndian(head.AsSpan(Magic.Length));
        if (!head.AsSpan(0, Magic.Length).SequenceEqual(Magic) || tokenLength > MaxTokenLength)
        {
            _logger.LogWarning("Refused a bulk connection from {Peer}: not a bulk request", SafeRemote(connection));
            return null;
        }

        byte[] rest = new byte[tokenLength + 16];
        await ReceiveExactlyAsync(connection, rest, timeout.Token).ConfigureAwait(false);
        string token = Encoding.ASCII.GetString(rest, 0, tokenLength);
        UInt128 ticket = BinaryPrimitives.ReadUInt128LittleEndian(rest.AsSpan(tokenLength));
        DateTimeOffset now = _time.GetUtcNow();
        PeerTokenCheck check = _key.Verify(token, PeerWire.BulkMethod, now, _skew, out UInt128 nonce, out DateTimeOffset issued);
        if (check != PeerTokenCheck.Valid || !_replays.TryAccept(nonce, issued + _skew, now))
        {
            _logger.LogWarning("Refused a bulk transfer to {Peer}: token {Check}", SafeRemote(connection), check == PeerTokenCheck.Valid ? "replayed" : check.ToString());
            await connection.SendAsync(new[] { StatusRefused }, SocketFlags.None, timeout.Token).ConfigureAwait(false);
            return null;
        }

        if (!_offers.TryRemove(ticket, out PeerBulkOffer? offer))
        {
            await connection.SendAsync(new[] { StatusUnknownTicket }, SocketFlags.None, timeout.Token).ConfigureAwait(false);
            return null;
        }

        return offer;
    }

    internal static async ValueTask ReceiveExactlyAsync(Socket socket, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (!buffer.IsEmpty)
        {
            int n = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                throw new IOException($"The connection closed with {buffer.Length} bytes still expected.");
            }

            buffer = buffer[n..];
        }
    }

    internal static async ValueTask SendAllAsync(Socket socket, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        while (!buffer.IsEmpty)
        {
            int n = await socket.SendAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            buffer = buffer[n..];
        }
    }

    private static string SafeRemote(Socket socket)
    {
        try
        {
            return socket.RemoteEndPoint?.ToString() ?? "?";
        }
        catch (ObjectDisposedException)
        {
            return "?";
        }
    }
}
