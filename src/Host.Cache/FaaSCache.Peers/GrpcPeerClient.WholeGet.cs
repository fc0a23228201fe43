namespace FaaSCache.Peers;

/// <summary>
/// A whole-object get, on the one transport the client keeps per peer: once a gRPC get's header has named the peer's
/// bulk port, in one round trip on a kept-open bulk connection (<see cref="PeerBulkServer"/>, request <c>G</c>: no HTTP/2
/// stream, no gRPC call; the same key, a fresh token per request, the same checksum checked before the consumer's last
/// read returns); before that, or while the port cannot be reached, over gRPC.
/// </summary>
public sealed partial class GrpcPeerClient
{
    private const int MaxIdleBulkConnections = 8;

    /// <summary>How long a peer whose bulk port could not be reached gets its bodies over gRPC before bulk is tried again.</summary>
    private static readonly TimeSpan BulkRetryAfter = TimeSpan.FromMinutes(1);

    /// <summary>A reply's first receive: the status, the header and a small object's whole body and checksum fit.</summary>
    private const int ReplyBufferSize = 8 << 10;

    private long _rawGets;

    /// <summary>Gets the number of gets served over a kept-open bulk connection (no gRPC call).</summary>
    internal long RawGets => Interlocked.Read(ref _rawGets);

    /// <inheritdoc />
    public async Task<PeerFetchResult<T>?> GetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        PeerRangeResult<T>? got = await GetCoreAsync(memberId, key, fetchIfMissing, null, consume, cancellationToken).ConfigureAwait(false);
        return got is { } r ? new PeerFetchResult<T>(r.Version, r.Length, r.OwnerHit, r.Value) : null;
    }

    /// <summary>
    /// A get over the peer's one transport for it: a whole object over its bulk connection once a gRPC get's header has
    /// named the port (and while it can be reached), a range or anything before that over gRPC.
    /// </summary>
    private async Task<PeerRangeResult<T>?> GetCoreAsync<T>(string memberId, string key, bool fetchIfMissing, ByteRange? range, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        bool whole = range is null && _options.UseBulkTransfers;
        if (whole && await TryRawGetAsync(memberId, key, fetchIfMissing, consume, cancellationToken).ConfigureAwait(false) is { Served: true } raw)
        {
            return raw.Result;
        }

        var request = new GetRequest { Key = key, FetchIfMissing = fetchIfMissing, Range = range, Bulk = whole };
        return await CallGetAsync(memberId, key, request, fetchIfMissing ? _options.FetchTimeout : _options.CallTimeout, "get", consume, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The get over the peer's bulk connection; not served (use gRPC) when its port is unknown or out of reach, or the peer says so.</summary>
    private async Task<RawGetOutcome<T>> TryRawGetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        PeerChannel peer = Channel(memberId);
        if (peer.BulkPort == 0 || !BulkReachable(peer))
        {
            return default;
        }

        try
        {
            return await RawGetAsync(peer, memberId, key, fetchIfMissing, consume, cancellationToken).ConfigureAwait(false);
        }
        catch (PeerUnavailableException e) when (e.InnerException is PeerBulkUnreachableException)
        {
            return default;
        }
    }

    private async Task<RawGetOutcome<T>> RawGetAsync<T>(PeerChannel peer, string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(fetchIfMissing ? _options.FetchTimeout : _options.CallTimeout);
        Socket? socket = null;
        PeerBulkReader? reply = null;
        bool keep = false;
        try
        {
            (socket, reply) = await SendRawGetAsync(peer, key, fetchIfMissing, timeout).ConfigureAwait(false);
            byte status = await ReadByteAsync(reply, timeout.Token).ConfigureAwait(false);
            switch (status)
            {
                case PeerBulkServer.StatusOk:
                    // After the status: hit (1 byte), version length (2), version, length (8).
                    ReadOnlyMemory<byte> head = await ReadAsync(reply, 3, timeout.Token).ConfigureAwait(false);
                    bool hit = head.Span[0] == 1;
                    bool headFits = head.Span[0] <= 1;
                    int versionLength = BinaryPrimitives.ReadUInt16BigEndian(head.Span[1..]);
                    ReadOnlyMemory<byte> rest = await ReadAsync(reply, versionLength + sizeof(long), timeout.Token).ConfigureAwait(false);
                    string version = Encoding.UTF8.GetString(rest.Span[..versionLength]);
                    long length = BinaryPrimitives.ReadInt64LittleEndian(rest.Span[versionLength..]);
                    if (length < 0 || version.Length == 0 || !headFits)
                    {
                        throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer's bulk header does not fit a get (version '{version}', {length} bytes).");
                    }

                    T value = await ConsumeAsync(socket, reply, length, version, consume, timeout, cancellationToken).ConfigureAwait(false);
                    keep = true;
                    Interlocked.Increment(ref _rawGets);
                    return new RawGetOutcome<T>(true, new PeerRangeResult<T>(version, 0, length, length, hit, value));
                case PeerBulkServer.StatusNotCached:
                    keep = true;
                    return new RawGetOutcome<T>(true, null);
                case PeerBulkServer.StatusUseGrpc:
                    keep = true;
                    return default;
                case PeerBulkServer.StatusNotFound:
                    string missing = await ReadMessageAsync(reply, timeout.Token).ConfigureAwait(false);
                    keep = true;
                    throw new BlobNotFoundException($"Blob {key} does not exist (peer {memberId}: {missing})") { Key = key };
                case PeerBulkServer.StatusFailed:
                    string reason = await ReadMessageAsync(reply, timeout.Token).ConfigureAwait(false);
                    keep = true;
                    throw new PeerTransferException(PeerTransferFailure.Transport, $"the peer failed it: {reason}");
                case PeerBulkServer.StatusRefused:
                    throw new PeerTransferException(PeerTransferFailure.Refused, "the bulk connection's token was refused");
                default:
                    throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer answered a bulk get with status {status}.");
            }
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "get", e, timeout, cancellationToken);
        }
        finally
        {
            // Bytes beyond the reply would be read as the next one's: such a connection is not kept.
            keep &= reply is { Buffered: 0 };
            reply?.Dispose();
            if (keep && socket is not null && peer.IdleBulk.Count < MaxIdleBulkConnections && _disposed == 0)
            {
                peer.IdleBulk.Enqueue(socket);
            }
            else
            {
                socket?.Dispose();
            }
        }
    }

    private async Task<T> ConsumeAsync<T>(Socket socket, PeerBulkReader reply, long length, string version, PeerBodyConsumer<T> consume, CancellationTokenSource timeout, CancellationToken cancellationToken)
    {
        await using var body = new PeerBulkBodyStream(socket, length, timeout, _options.IdleTimeout, reply.TakeBuffered());
        T value = await body.ConsumeVerifiedAsync(length, version, consume, cancellationToken).ConfigureAwait(false);
        if (body.UnreadPrefetched > 0)
        {
            throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer sent {body.UnreadPrefetched} bytes after a get's checksum.");
        }

        return value;
    }

    /// <summary>
    /// Sends the request on an idle connection (once more on a new one if that was stale) and receives what has arrived of
    /// the reply (its status at least): a small object's whole reply comes in this one receive.
    /// </summary>
    private async Task<(Socket Socket, PeerBulkReader Reply)> SendRawGetAsync(PeerChannel peer, string key, bool fetchIfMissing, CancellationTokenSource timeout)
    {
        byte[] request = PeerBulkBodyStream.GetRequest(_key.CreateToken(PeerWire.BulkMethod, _time.GetUtcNow()), key, fetchIfMissing);
        while (true)
        {
            bool pooled = peer.IdleBulk.TryDequeue(out Socket? socket);
            socket ??= await ConnectBulkAsync(peer, timeout).ConfigureAwait(false);
            var reply = new PeerBulkReader(socket, ReplyBufferSize);
            try
            {
                await PeerBulkBody.SendAllAsync(socket, request, timeout.Token).ConfigureAwait(false);
                if (!await reply.FillAsync(timeout.Token).ConfigureAwait(false))
                {
                    throw new EndOfStreamException("The connection closed before the reply.");
                }

                return (socket, reply);
            }
            catch (Exception e) when (e is SocketException or IOException)
            {
                reply.Dispose();
                socket.Dispose();
                if (!pooled)
                {
                    throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk connection broke before the reply: {e.Message}", e);
                }

                // The owner closed that idle connection (it keeps them two minutes): try a new one.
            }
            catch
            {
                reply.Dispose();
                socket.Dispose();
                throw;
            }
        }
    }

    private async Task<Socket> ConnectBulkAsync(PeerChannel peer, CancellationTokenSource timeout)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var connect = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        connect.CancelAfter(_options.ConnectTimeout);
        try
        {
            await socket.ConnectAsync(peer.Endpoint.IdnHost, peer.BulkPort, connect.Token).ConfigureAwait(false);
            return socket;
        }
        catch (Exception e) when (e is SocketException || (e is OperationCanceledException && !timeout.IsCancellationRequested))
        {
            socket.Dispose();
            peer.BulkUnreachableUntil = _time.GetUtcNow() + BulkRetryAfter;
            throw new PeerBulkUnreachableException($"No bulk connection to {peer.Endpoint.IdnHost}:{peer.BulkPort}: {e.Message}", e);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static async ValueTask<ReadOnlyMemory<byte>> ReadAsync(PeerBulkReader reply, int count, CancellationToken cancellationToken)
    {
        try
        {
            return await reply.ReadExactlyAsync(count, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is SocketException or IOException)
        {
            throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk connection broke in a reply: {e.Message}", e);
        }
    }

    private static async ValueTask<byte> ReadByteAsync(PeerBulkReader reply, CancellationToken cancellationToken) =>
        (await ReadAsync(reply, 1, cancellationToken).ConfigureAwait(false)).Span[0];

    private static async ValueTask<string> ReadMessageAsync(PeerBulkReader reply, CancellationToken cancellationToken)
    {
        int length = BinaryPrimitives.ReadUInt16BigEndian((await ReadAsync(reply, 2, cancellationToken).ConfigureAwait(false)).Span);
        return Encoding.UTF8.GetString((await ReadAsync(reply, length, cancellationToken).ConfigureAwait(false)).Span);
    }

    /// <summary>What a get over the bulk connection gave: served (with a result, or null when the peer does not hold it), or not (use gRPC).</summary>
    private readonly record struct RawGetOutcome<T>(bool Served, PeerRangeResult<T>? Result);

    private bool BulkReachable(PeerChannel peer) => _time.GetUtcNow() >= peer.BulkUnreachableUntil;

    /// <summary>Remembers the bulk port a peer's get header named; a new one (the peer restarted) is tried at once.</summary>
    private static void LearnBulkPort(PeerChannel peer, GetRequest request, GetHeader header)
    {
        if (request.Bulk && header.BulkPort is > 0 and <= 65535 && header.BulkPort != peer.BulkPort)
        {
            peer.BulkPort = header.BulkPort;
            peer.BulkUnreachableUntil = DateTimeOffset.MinValue;
        }
    }

    private sealed record PeerChannel(Uri Endpoint, GrpcChannel Channel, CallInvoker Invoker, CacheletPeer.CacheletPeerClient Client)
    {
        /// <summary>Gets or sets the time until which whole gets of this peer go over gRPC (its bulk port was out of reach).</summary>
        public DateTimeOffset BulkUnreachableUntil { get; set; } = DateTimeOffset.MinValue;

        /// <summary>Gets or sets the peer's bulk port, learned from a get's header (0: not known yet).</summary>
        public int BulkPort { get; set; }

        /// <summary>Gets the kept-open bulk connections nobody is using.</summary>
        public System.Collections.Concurrent.ConcurrentQueue<System.Net.Sockets.Socket> IdleBulk { get; } = new();
    }
}
