namespace FaaSCache.Peers;

/// <summary>
/// §3.2, whole-object bodies beside gRPC: a raw TCP listener (one per local address the peer service is called on, on a
/// free port) that sends an object's bytes straight from the owner's map into the socket, hashing them in the same pass,
/// then their XxHash3. One kind of request, with a fresh <see cref="PeerKey"/> token for <see cref="PeerWire.BulkMethod"/>:
/// <c>G</c>, a whole get in one round trip on a kept-open connection (the caller learned the port from an earlier gRPC
/// get's header, and sends every later whole get of that peer here). Against gRPC this saves the HTTP/2 framing, the per-call stream set-up and most copies
/// (map → Kestrel pipe → frames → kernel → HttpClient buffers → gRPC message → map); what is left is the kernel's copy
/// on each side and the requester's pwrite into its map.
/// </summary>
/// <remarks>
/// Wire (request): "FCB1", token length (uint16, big-endian), the token (ASCII), the kind <c>G</c>, flags (1 = fetch if
/// missing), key length (uint16, big-endian), the key (UTF-8). Reply: see <see cref="ServeGetAsync"/>.
/// A connection serves requests one after the other until it is closed or idle for <see cref="IdleTimeout"/>.
/// </remarks>
public sealed partial class PeerBulkServer : IAsyncDisposable
{
    internal const byte StatusOk = 0;
    internal const byte StatusRefused = 1;
    internal const byte KindGet = (byte)'G';
    internal const int MaxTokenLength = 512;
    internal const int MaxKeyLength = 2048;
    internal static readonly byte[] Magic = "FCB1"u8.ToArray();

    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan IdleTimeout = TimeSpan.FromMinutes(2);

    /// <summary>A request's buffer: magic, token and a key of usual length fit; a longer key grows it.</summary>
    private const int RequestBufferSize = 1024;

    private readonly PeerKey _key;
    private readonly TimeSpan _skew;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly IPeerServingCache? _cache;
    private readonly PeerReplayGuard _replays = new();
    private readonly ConcurrentDictionary<IPAddress, Lazy<Socket>> _listeners = new();
    private readonly CancellationTokenSource _stopping = new();
    private int _disposed;

    /// <summary>Initializes a new instance of the <see cref="PeerBulkServer"/> class.</summary>
    /// <param name="options">The peer service's options (key, clock skew).</param>
    /// <param name="time">Clock for tokens.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="cache">The cachelet that serves <c>G</c> requests; null: they are answered "use gRPC".</param>
    public PeerBulkServer(IOptions<PeerServerOptions> options, TimeProvider? time = null, ILogger<PeerBulkServer>? logger = null, IPeerServingCache? cache = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        PeerServerOptions o = new PeerServerOptionsValidator().ThrowIfInvalid(options.Value);
        _key = o.Key!;
        _skew = o.MaxClockSkew;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _cache = cache;
    }

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

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        StopOwnThreads();
        foreach (Lazy<Socket> listener in _listeners.Values)
        {
            if (listener.IsValueCreated)
            {
                listener.Value.Dispose();
            }
        }

        _listeners.Clear();
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

            if (!TryServeOnOwnThread(connection, stopping))
            {
                _ = ServeAsync(connection, stopping);
            }
        }
    }

    private async Task ServeAsync(Socket connection, CancellationToken stopping)
    {
        using (connection)
        using (var reader = new PeerBulkReader(connection, RequestBufferSize))
        {
            try
            {
                connection.NoDelay = true;
                while (await ServeRequestAsync(connection, reader, stopping).ConfigureAwait(false))
                {
                }
            }
            catch (Exception e) when (IsConnectionEnd(e))
            {
                _logger.LogDebug(e, "A bulk connection from {Peer} ended", SafeRemote(connection));
            }
        }
    }

    private static bool IsConnectionEnd(Exception e) => e is SocketException or IOException or OperationCanceledException or ObjectDisposedException;

    /// <summary>Serves one request; false when the connection is done (closed by the caller, refused, or broken off).</summary>
    private async Task<bool> ServeRequestAsync(Socket connection, PeerBulkReader reader, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(IdleTimeout);
        if (reader.Buffered == 0 && !await reader.FillAsync(timeout.Token).ConfigureAwait(false))
        {
            return false;
        }

        // One receive usually brings the whole request; the fields are read from it.
        timeout.CancelAfter(RequestTimeout);
        ReadOnlyMemory<byte> head = await reader.ReadExactlyAsync(Magic.Length + 2, timeout.Token).ConfigureAwait(false);
        int tokenLength = BinaryPrimitives.ReadUInt16BigEndian(head.Span[Magic.Length..]);
        if (!head.Span[..Magic.Length].SequenceEqual(Magic) || tokenLength > MaxTokenLength)
        {
            _logger.LogWarning("Refused a bulk connection from {Peer}: not a bulk request", SafeRemote(connection));
            return false;
        }

        ReadOnlyMemory<byte> request = await reader.ReadExactlyAsync(tokenLength + 1, timeout.Token).ConfigureAwait(false);
        string token = Encoding.ASCII.GetString(request.Span[..tokenLength]);
        byte kind = request.Span[tokenLength];
        DateTimeOffset now = _time.GetUtcNow();
        PeerTokenCheck check = _key.Verify(token, PeerWire.BulkMethod, now, _skew, out UInt128 nonce, out DateTimeOffset issued);
        if (check != PeerTokenCheck.Valid || !_replays.TryAccept(nonce, issued + _skew, now))
        {
            _logger.LogWarning("Refused a bulk request from {Peer}: token {Check}", SafeRemote(connection), check == PeerTokenCheck.Valid ? "replayed" : check.ToString());
            await connection.SendAsync(new[] { StatusRefused }, SocketFlags.None, timeout.Token).ConfigureAwait(false);
            return false;
        }

        if (kind != KindGet)
        {
            _logger.LogWarning("Refused a bulk request from {Peer}: unknown kind {Kind}", SafeRemote(connection), kind);
            return false;
        }

        ReadOnlyMemory<byte> get = await reader.ReadExactlyAsync(3, timeout.Token).ConfigureAwait(false);
        bool fetchIfMissing = (get.Span[0] & 1) != 0;
        int keyLength = BinaryPrimitives.ReadUInt16BigEndian(get.Span[1..]);
        if (keyLength > MaxKeyLength)
        {
            return false;
        }

        string key = Encoding.UTF8.GetString((await reader.ReadExactlyAsync(keyLength, timeout.Token).ConfigureAwait(false)).Span);
        return await ServeGetAsync(connection, key, fetchIfMissing, stopping).ConfigureAwait(false);
    }

    internal static ValueTask ReceiveExactlyAsync(Socket socket, Memory<byte> buffer, CancellationToken cancellationToken) => PeerBulkBody.ReceiveExactlyAsync(socket, buffer, cancellationToken);

    internal static ValueTask SendAllAsync(Socket socket, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken) => PeerBulkBody.SendAllAsync(socket, buffer, cancellationToken);

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
