namespace FaaSCache.Peers;

/// <summary>What a peer delivered for a ranged get.</summary>
/// <typeparam name="T">The consumer's result.</typeparam>
/// <param name="Version">The version of the object the range was cut from.</param>
/// <param name="Offset">The first byte delivered.</param>
/// <param name="Length">The bytes delivered (the range, cut at the end of the object).</param>
/// <param name="TotalLength">The object's length.</param>
/// <param name="OwnerHit">True when the peer had it cached, false when it fetched it from storage.</param>
/// <param name="Value">The consumer's result.</param>
public readonly record struct PeerRangeResult<T>(string Version, long Offset, long Length, long TotalLength, bool OwnerHit, T Value);

/// <summary>
/// <see cref="IPeerClient"/> over gRPC (HTTP/2 cleartext, <c>src/Protos/Peer.proto</c>): one channel per peer
/// endpoint (from <see cref="IPeerDirectory"/>), a <see cref="PeerKey"/> token on every call. A get streams
/// the body into the consumer's stream, copying each chunk straight from gRPC's receive buffer into the
/// consumer's buffer (its shared-memory map), and checks the XxHash3 trailer before the read that completes the
/// body returns. Unreachable, refusing, slow or corrupting peers surface as <see cref="PeerUnavailableException"/>
/// (the caller falls back to storage); a blob that does not exist as <see cref="BlobNotFoundException"/>.
/// </summary>
public sealed partial class GrpcPeerClient : IPeerClient, IDisposable
{
    private const string PutMethod = "/" + PeerWire.ServiceName + "/Put";
    private const string VersionMethod = "/" + PeerWire.ServiceName + "/GetVersion";
    private const string InvalidateMethod = "/" + PeerWire.ServiceName + "/Invalidate";

    private readonly IPeerDirectory _directory;
    private readonly PeerKey _key;
    private readonly PeerClientOptions _options;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<Uri, Lazy<PeerChannel>> _channels = new();
    private long _directChunks;
    private long _bufferedChunks;
    private int _disposed;

    /// <summary>Initializes a new instance of the <see cref="GrpcPeerClient"/> class.</summary>
    /// <param name="directory">Where each member's peer service listens.</param>
    /// <param name="key">The app's peer key (see <see cref="PeerKey.FromConnectionString"/>).</param>
    /// <param name="options">Timeouts and sizes; defaults when null.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="time">Clock for tokens.</param>
    public GrpcPeerClient(IPeerDirectory directory, PeerKey key, PeerClientOptions? options = null, ILogger<GrpcPeerClient>? logger = null, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(directory);
        ArgumentNullException.ThrowIfNull(key);
        options = new PeerClientOptionsValidator().ThrowIfInvalid(options ?? new PeerClientOptions());
        _directory = directory;
        _key = key;
        _options = options;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <summary>Gets the number of get chunks copied straight into the consumer's buffer.</summary>
    internal long DirectChunks => Interlocked.Read(ref _directChunks);

    /// <summary>Gets the number of get chunks that went through a pooled buffer.</summary>
    internal long BufferedChunks => Interlocked.Read(ref _bufferedChunks);


    /// <summary>Gets or sets a value indicating whether get chunks may be copied straight into the consumer's buffer (off: always through a pooled buffer; for measurements).</summary>
    internal bool CopyIntoDestination { get; set; } = true;

    /// <summary>
    /// Gets <paramref name="length"/> bytes of <paramref name="key"/> from <paramref name="offset"/> (0 = to the end; a
    /// range past the end is cut there) from <paramref name="memberId"/>; the consumer receives just those bytes.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The offset is past the end of the object.</exception>
    public Task<PeerRangeResult<T>?> GetRangeAsync<T>(string memberId, string key, long offset, long length, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        return GetCoreAsync(memberId, key, fetchIfMissing, new ByteRange { Offset = offset, Length = length }, consume, cancellationToken);
    }

    /// <inheritdoc />
    public async Task<T> LoadRangeAsync<T>(string memberId, string key, string version, long offset, long length, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(version);
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(length);
        var request = new GetRequest { Key = key, LoadVersion = version, Range = new ByteRange { Offset = offset, Length = length } };
        PeerRangeResult<T>? got = await CallGetAsync(memberId, key, request, _options.FetchTimeout, "range load", consume, cancellationToken).ConfigureAwait(false);
        return got is { } r && r.Length == length
            ? r.Value
            : throw new PeerUnavailableException($"Peer {memberId} answered a range load of {key} with {got?.Length ?? 0} bytes, not {length}.") { MemberId = memberId };
    }

    /// <inheritdoc />
    public async Task<PeerProbeResult> ProbeAsync(string memberId, long length, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(length);
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        long firstByte = 0;
        var request = new GetRequest { ProbeLength = length };
        PeerRangeResult<long>? got = await CallGetAsync<long>(
            memberId,
            "probe",
            request,
            _options.FetchTimeout,
            "probe",
            (count, _, content, token) =>
            {
                firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
                return StreamDrain.CountAsync(content, _options.ChunkSize, token);
            },
            cancellationToken).ConfigureAwait(false);
        long ended = System.Diagnostics.Stopwatch.GetTimestamp();
        return new PeerProbeResult(got?.Value ?? 0, System.Diagnostics.Stopwatch.GetElapsedTime(started, firstByte), System.Diagnostics.Stopwatch.GetElapsedTime(firstByte, ended));
    }

    /// <inheritdoc />
    public async Task<PeerWriteResult> PutAsync(string memberId, string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(content);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        PeerChannel peer = Channel(memberId);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(_options.IdleTimeout);
        AsyncClientStreamingCall<PutRequest, PutReply>? call = null;
        byte[] buffer = ArrayPool<byte>.Shared.Rent((int)Math.Min(_options.ChunkSize, Math.Max(length, 1)));
        try
        {
            call = peer.Client.Put(Auth(PutMethod), cancellationToken: timeout.Token);
            try
            {
                await SendPutAsync(call.RequestStream, new PutHeader { Key = key, Length = length, CreateOnly = createOnly }, content, buffer, timeout, _options.IdleTimeout, cancellationToken).ConfigureAwait(false);
                timeout.CancelAfter(_options.FetchTimeout);
            }
            catch (Exception e) when (e is RpcException or InvalidOperationException or IOException && e is not ObjectDisposedException && !cancellationToken.IsCancellationRequested)
            {
                // The owner ended the call while we were sending (refused, or failed): its status, already here, says why.
                _logger.LogDebug(e, "Put of {Key} to {Member} stopped while sending", key, memberId);
                timeout.CancelAfter(_options.CallTimeout);
            }

            PutReply reply = await call.ResponseAsync.ConfigureAwait(false);
            return new PeerWriteResult(reply.Version, reply.Persisted);
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "put", e, timeout, cancellationToken);
        }
        finally
        {
            call?.Dispose();
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <inheritdoc />
    public async Task<string?> GetVersionAsync(string memberId, string key, CancellationToken cancellationToken = default)
    {
        PeerChannel peer = Channel(memberId);
        try
        {
            VersionReply reply = await peer.Client.GetVersionAsync(new VersionRequest { Key = key }, Auth(VersionMethod), Deadline(), cancellationToken).ConfigureAwait(false);
            return reply.Found ? reply.Version : null;
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "version query", e, null, cancellationToken);
        }
    }

    /// <inheritdoc />
    public async Task InvalidateAsync(string memberId, string key, string version, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(version);
        PeerChannel peer = Channel(memberId);
        try
        {
            await peer.Client.InvalidateAsync(new InvalidateRequest { Key = key, Version = version }, Auth(InvalidateMethod), Deadline(), cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, "invalidation", e, null, cancellationToken);
        }
    }

    /// <inheritdoc />
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        foreach (Lazy<PeerChannel> channel in _channels.Values.Concat(_retired.Keys))
        {
            if (channel.IsValueCreated)
            {
                DisposeChannel(channel.Value);
            }
        }

        _channels.Clear();
        _retired.Clear();
    }

    private static bool IsPeerFailure(Exception e) => e is RpcException or PeerTransferException or PeerBulkUnreachableException or OperationCanceledException or HttpRequestException;

    private static async Task SendPutAsync(IClientStreamWriter<PutRequest> requests, PutHeader header, Stream content, byte[] buffer, CancellationTokenSource timeout, TimeSpan idleTimeout, CancellationToken cancellationToken)
    {
        long length = header.Length;
        await requests.WriteAsync(new PutRequest { Header = header }, cancellationToken).ConfigureAwait(false);
        var hash = new XxHash3();
        for (long sent = 0; sent < length;)
        {
            int want = (int)Math.Min(buffer.Length, length - sent);
            int n = await content.ReadAtLeastAsync(buffer.AsMemory(0, want), want, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
            if (n < want)
            {
                throw new ArgumentException($"The content stream ended after {sent + n} of the {length} bytes announced.", nameof(content));
            }

            hash.Append(buffer.AsSpan(0, n));
            timeout.CancelAfter(idleTimeout);

            // The message is serialized before WriteAsync completes: the buffer can be refilled afterwards.
            await requests.WriteAsync(new PutRequest { Chunk = UnsafeByteOperations.UnsafeWrap(buffer.AsMemory(0, n)) }, cancellationToken).ConfigureAwait(false);
            sent += n;
        }

        await requests.WriteAsync(new PutRequest { Trailer = new Trailer { Xxhash3 = hash.GetCurrentHashAsUInt64() } }, cancellationToken).ConfigureAwait(false);
        await requests.CompleteAsync().ConfigureAwait(false);
    }

    private async Task<PeerRangeResult<T>?> CallGetAsync<T>(string memberId, string key, GetRequest request, TimeSpan callTimeout, string operation, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(consume);
        PeerChannel peer = Channel(memberId);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(callTimeout);
        ByteRange? range = request.Range;
        AsyncServerStreamingCall<GetReplyFrame>? call = null;
        try
        {
            call = peer.Invoker.AsyncServerStreamingCall(GetReplyFrame.Method, null, new CallOptions(Auth(GetReplyFrame.Method.FullName), cancellationToken: timeout.Token), request);
            if (!await call.ResponseStream.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                throw new PeerTransferException(PeerTransferFailure.Protocol, "The peer ended the get without a header.");
            }

            GetHeader header = call.ResponseStream.Current.Header
                ?? throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer sent a {call.ResponseStream.Current.Part} message before the header.");
            if (!header.Found)
            {
                return null;
            }

            CheckHeader(header, range);
            LearnBulkPort(peer, request, header);
            await using var body = new PeerGetBodyStream(call.ResponseStream, header.Length, timeout, _options.IdleTimeout, CopyIntoDestination);
            try
            {
                T value = await body.ConsumeVerifiedAsync(header.Length, header.Version, consume, cancellationToken).ConfigureAwait(false);
                return new PeerRangeResult<T>(header.Version, header.Offset, header.Length, header.TotalLength, header.Hit, value);
            }
            finally
            {
                Interlocked.Add(ref _directChunks, body.DirectChunks);
                Interlocked.Add(ref _bufferedChunks, body.BufferedChunks);
            }
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.OutOfRange)
        {
            throw new ArgumentOutOfRangeException(e.Status.Detail, e);
        }
        catch (Exception e) when (IsPeerFailure(e))
        {
            throw Failure(memberId, key, operation, e, timeout, cancellationToken);
        }
        finally
        {
            call?.Dispose();
        }
    }

    private static void CheckHeader(GetHeader header, ByteRange? range)
    {
        bool sane = header.Length >= 0 && header.Offset >= 0 && header.TotalLength >= 0 && header.Offset + header.Length <= header.TotalLength
            && (range is not null || (header.Offset == 0 && header.Length == header.TotalLength))
            && (range is null || header.Offset == range.Offset);
        if (!sane || string.IsNullOrEmpty(header.Version))
        {
            throw new PeerTransferException(PeerTransferFailure.Protocol, $"The peer's header does not fit the request (version '{header.Version}', bytes {header.Offset}+{header.Length} of {header.TotalLength}).");
        }
    }
}
