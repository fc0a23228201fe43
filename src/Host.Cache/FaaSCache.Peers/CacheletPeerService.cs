namespace FaaSCache.Peers;

/// <summary>
/// The peer service of one cachelet (§3.2): serves gets (whole objects or byte ranges, streamed from the
/// shared-memory map without copying it into managed arrays), accepts puts as the owner (committed only
/// when the checksum matches), answers version queries and invalidations. Callers are authenticated by
/// <see cref="PeerAuthInterceptor"/> before any of this runs.
/// </summary>
public sealed partial class CacheletPeerService : CacheletPeer.CacheletPeerBase
{
    private readonly IPeerServingCache _cachelet;
    private readonly int _chunkSize;
    private readonly ILogger _logger;
    private readonly PeerBulkServer? _bulk;
    private readonly FaaSCache.ResultCaching.LocalResultStore? _results;

    /// <summary>Initializes a new instance of the <see cref="CacheletPeerService"/> class.</summary>
    /// <param name="cachelet">This instance's cachelet (from DI).</param>
    /// <param name="options">Peer options.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="bulk">The bulk listener for large gets; null: every body goes over gRPC.</param>
    /// <param name="results">The function results this instance keeps; null: it keeps none for peers.</param>
    public CacheletPeerService(IPeerServingCache cachelet, IOptions<PeerServerOptions> options, ILogger<CacheletPeerService>? logger = null, PeerBulkServer? bulk = null, FaaSCache.ResultCaching.LocalResultStore? results = null)
    {
        ArgumentNullException.ThrowIfNull(cachelet);
        _ = new PeerServerOptionsValidator().ThrowIfInvalid(options.Value);
        _cachelet = cachelet;
        _chunkSize = options.Value.ChunkSize;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _bulk = bulk;
        _results = results;
    }

    /// <inheritdoc />
    public override async Task Get(GetRequest request, IServerStreamWriter<GetReply> responseStream, ServerCallContext context)
    {
        if (request.ProbeLength > 0)
        {
            await ServeProbeAsync(request.ProbeLength, responseStream, context.CancellationToken).ConfigureAwait(false);
            return;
        }

        CheckKey(request.Key);
        if (request.LoadVersion.Length > 0)
        {
            await ServeRangeLoadAsync(request, responseStream, context.CancellationToken).ConfigureAwait(false);
            return;
        }

        CancellationToken cancellationToken = context.CancellationToken;
        PeerGetServe? served;
        try
        {
            // A whole-object miss is streamed while the owner downloads it; a range needs the bytes it names first.
            served = await _cachelet.ServePeerGetAsync(request.Key, request.FetchIfMissing, follow: request.Range is null, cancellationToken).ConfigureAwait(false);
        }
        catch (BlobNotFoundException e)
        {
            throw new RpcException(new Status(StatusCode.NotFound, e.Message));
        }

        if (served is null)
        {
            await responseStream.WriteAsync(new GetReply { Header = new GetHeader { Found = false } }, cancellationToken).ConfigureAwait(false);
            return;
        }

        int bulkPort = BulkPort(request, context);
        if (served.Progress is { } progress)
        {
            await SendWhileFillingAsync(request.Key, progress, served.Completion!, bulkPort, responseStream, cancellationToken).ConfigureAwait(false);
            return;
        }

        using ObjectLease lease = served.Lease!;
        (long offset, long length) = Range(request.Range, lease.Count);
        var header = new GetHeader { Found = true, Version = lease.Version, TotalLength = lease.Count, Offset = offset, Length = length, Hit = served.Hit, BulkPort = bulkPort };

        if (length <= PeerWire.SmallObjectSize)
        {
            // Header, chunk and trailer leave in one flush with the call's end: one round trip's worth of writes, not four.
            responseStream.WriteOptions = new WriteOptions(WriteFlags.BufferHint);
        }

        await responseStream.WriteAsync(new GetReply { Header = header }, cancellationToken).ConfigureAwait(false);

        ulong checksum = lease.Count <= int.MaxValue
            ? await SendFromMemoryAsync(lease.Memory.Slice((int)offset, (int)length), responseStream, cancellationToken).ConfigureAwait(false)
            : await SendFromStreamAsync(lease, offset, length, responseStream, cancellationToken).ConfigureAwait(false);
        await responseStream.WriteAsync(new GetReply { Trailer = new Trailer { Xxhash3 = checksum } }, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// The bulk port of this call's local address when the caller asks for it (its header tells the caller, which sends
    /// its later whole gets of this peer there), or 0: no listener, or not asked for.
    /// </summary>
    private int BulkPort(GetRequest request, ServerCallContext context)
    {
        if (_bulk is null || !request.Bulk)
        {
            return 0;
        }

        System.Net.IPAddress local = context.GetHttpContext().Connection.LocalIpAddress ?? System.Net.IPAddress.Loopback;
        try
        {
            return _bulk.Listen(local);
        }
        catch (System.Net.Sockets.SocketException e)
        {
            _logger.LogWarning("No bulk listener on {Address} ({Reason}): whole gets go over gRPC", local, e.Message);
            return 0;
        }
    }

    /// <inheritdoc />
    public override async Task<PutReply> Put(IAsyncStreamReader<PutRequest> requestStream, ServerCallContext context)
    {
        CancellationToken cancellationToken = context.CancellationToken;
        if (!await requestStream.MoveNext(cancellationToken).ConfigureAwait(false) || requestStream.Current.PartCase != PutRequest.PartOneofCase.Header)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "A put starts with a header."));
        }

        PutHeader header = requestStream.Current.Header;
        CheckKey(header.Key);
        if (header.Length < 0)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"A put of {header.Length} bytes."));
        }

        await using var body = new PeerPutBodyStream(requestStream, header.Length);
        try
        {
            if (header.Length == 0)
            {
                // Nothing for the cachelet to read: check the (empty) body before it commits anything.
                await body.DrainAndVerifyAsync(cancellationToken).ConfigureAwait(false);
            }

            PeerWriteResult result = await _cachelet.AcceptPeerWriteAsync(header.Key, body, header.Length, header.CreateOnly, cancellationToken).ConfigureAwait(false);
            return new PutReply { Version = result.Version, Persisted = result.Persisted };
        }
        catch (BlobAlreadyExistsException e)
        {
            throw new RpcException(new Status(StatusCode.AlreadyExists, e.Message));
        }
        catch (Exception e) when (e is StorageUnavailableException or MembershipLeaseLostException)
        {
            // A definite "not written" with its reason, which the sender relays (GrpcPeerClient.Failures), not "owner failed".
            throw new RpcException(
                new Status(StatusCode.Unavailable, e.Message),
                new Metadata { { PeerFailureTrailer.Name, e is StorageUnavailableException ? PeerFailureTrailer.StorageUnavailable : PeerFailureTrailer.LeaseLost } });
        }
        catch (PeerTransferException e)
        {
            _logger.LogWarning("Refused a put of {Key} ({Length} bytes) from {Peer}: {Reason}", header.Key, header.Length, context.Peer, e.Message);
            StatusCode code = e.Failure switch
            {
                PeerTransferFailure.Corrupted => StatusCode.DataLoss,
                PeerTransferFailure.Protocol => StatusCode.InvalidArgument,
                _ => StatusCode.Aborted,
            };
            throw new RpcException(new Status(code, e.Message));
        }
    }

    /// <inheritdoc />
    public override async Task<VersionReply> GetVersion(VersionRequest request, ServerCallContext context)
    {
        CheckKey(request.Key);
        string? version = await _cachelet.GetOwnerVersionAsync(request.Key, context.CancellationToken).ConfigureAwait(false);
        return new VersionReply { Found = version is not null, Version = version ?? string.Empty };
    }

    /// <inheritdoc />
    public override Task<InvalidateReply> Invalidate(InvalidateRequest request, ServerCallContext context)
    {
        CheckKey(request.Key);
        if (string.IsNullOrEmpty(request.Version))
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "An invalidation names the version that stays."));
        }

        return Task.FromResult(new InvalidateReply { Dropped = _cachelet.Invalidate(request.Key, request.Version) });
    }

    private static void CheckKey(string key)
    {
        try
        {
            BlobKey.Parse(key);
        }
        catch (ArgumentException e)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, e.Message));
        }
    }

    private static (long Offset, long Length) Range(ByteRange? range, long total)
    {
        if (range is null)
        {
            return (0, total);
        }

        if (range.Offset < 0 || range.Length < 0)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"Range offset {range.Offset}, length {range.Length}: neither may be negative."));
        }

        if (range.Offset > total)
        {
            throw new RpcException(new Status(StatusCode.OutOfRange, $"Range offset {range.Offset} is past the end of the {total}-byte object."));
        }

        long rest = total - range.Offset;
        return (range.Offset, range.Length == 0 ? rest : Math.Min(range.Length, rest));
    }

    /// <summary>
    /// Streams the map's bytes in chunks: each message wraps a slice of the map (no copy into a managed array;
    /// the serializer copies it once, into the HTTP/2 output). Each write waits for the transport (back-pressure),
    /// so at most about a chunk plus the connection's window is in flight while the lease keeps the map alive.
    /// </summary>
    private async Task<ulong> SendFromMemoryAsync(ReadOnlyMemory<byte> content, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        var hash = new XxHash3();
        for (int sent = 0; sent < content.Length;)
        {
            ReadOnlyMemory<byte> chunk = content.Slice(sent, Math.Min(_chunkSize, content.Length - sent));
            hash.Append(chunk.Span);
            await responseStream.WriteAsync(new GetReply { Chunk = UnsafeByteOperations.UnsafeWrap(chunk) }, cancellationToken).ConfigureAwait(false);
            sent += chunk.Length;
        }

        return hash.GetCurrentHashAsUInt64();
    }

    /// <summary>Objects of 2 GiB and more have no single span: read them through a pooled buffer.</summary>
    private async Task<ulong> SendFromStreamAsync(ObjectLease lease, long offset, long length, IServerStreamWriter<GetReply> responseStream, CancellationToken cancellationToken)
    {
        var hash = new XxHash3();
        byte[] buffer = ArrayPool<byte>.Shared.Rent(_chunkSize);
        try
        {
            await using Stream content = lease.OpenRead();
            content.Position = offset;
            for (long sent = 0; sent < length;)
            {
                int n = (int)Math.Min(_chunkSize, length - sent);
                await content.ReadExactlyAsync(buffer.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
                hash.Append(buffer.AsSpan(0, n));

                // The serializer copies the bytes before WriteAsync completes, so the buffer can be reused.
                await responseStream.WriteAsync(new GetReply { Chunk = UnsafeByteOperations.UnsafeWrap(buffer.AsMemory(0, n)) }, cancellationToken).ConfigureAwait(false);
                sent += n;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        return hash.GetCurrentHashAsUInt64();
    }
}
