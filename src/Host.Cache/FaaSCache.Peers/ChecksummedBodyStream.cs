namespace FaaSCache.Peers;

/// <summary>
/// A read-only stream over a streamed body of a known length (chunks, then a trailer with an XxHash3 of the
/// bytes). It hashes what it hands out and checks the trailer when it hands out the last byte: the read that
/// completes the body throws <see cref="PeerTransferException"/> on a mismatch, so a consumer that fills a map
/// with exactly <c>length</c> bytes (and stops there) fails and deletes it before the object is exposed.
/// </summary>
internal abstract class ChecksummedBodyStream : Stream
{
    private readonly XxHash3 _hash = new();
    private long _remaining;
    private ReadOnlyMemory<byte> _pending;
    private IDisposable? _pendingOwner;
    private bool _verified;

    protected ChecksummedBodyStream(long length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        Length = length;
        _remaining = length;
    }

    /// <summary>Gets a value indicating whether the whole body was received and its checksum matched.</summary>
    public bool Verified => _verified;

    /// <inheritdoc />
    public override long Length { get; }

    /// <inheritdoc />
    public override bool CanRead => true;

    /// <inheritdoc />
    public override bool CanSeek => false;

    /// <inheritdoc />
    public override bool CanWrite => false;

    /// <inheritdoc />
    public override long Position
    {
        get => Length - _remaining;
        set => throw new NotSupportedException();
    }

    /// <inheritdoc />
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_remaining == 0)
        {
            await VerifyAsync(cancellationToken).ConfigureAwait(false);
            return 0;
        }

        if (buffer.IsEmpty)
        {
            return 0;
        }

        if (buffer.Length > _remaining)
        {
            buffer = buffer[..(int)_remaining];
        }

        int n;
        if (!_pending.IsEmpty)
        {
            n = TakePending(buffer.Span);
        }
        else
        {
            BodyChunk chunk = await ReceiveChunkAsync(buffer, cancellationToken).ConfigureAwait(false);
            switch (chunk.Kind)
            {
                case BodyChunkKind.Direct:
                    n = chunk.Count;
                    if (n <= 0 || n > buffer.Length)
                    {
                        throw Protocol($"a chunk of {n} bytes with {_remaining} expected");
                    }

                    break;
                case BodyChunkKind.Buffered:
                    if (chunk.Data.Length > _remaining)
                    {
                        chunk.Owner?.Dispose();
                        throw Protocol($"a chunk of {chunk.Data.Length} bytes with {_remaining} expected");
                    }

                    _pending = chunk.Data;
                    _pendingOwner = chunk.Owner;
                    n = TakePending(buffer.Span);
                    if (n == 0)
                    {
                        return await ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                    }

                    break;
                case BodyChunkKind.Trailer:
                    throw Protocol($"the trailer after {Position} of {Length} bytes");
                default:
                    throw new PeerTransferException(PeerTransferFailure.Transport, $"The sender stopped after {Position} of {Length} bytes.");
            }
        }

        _hash.Append(buffer.Span[..n]);
        _remaining -= n;
        if (_remaining == 0)
        {
            // The consumer may stop reading here (it has all the bytes): check before it can use them.
            await VerifyAsync(cancellationToken).ConfigureAwait(false);
        }

        return n;
    }

    /// <summary>
    /// Hands the body to <paramref name="consume"/> and returns its value only once the whole body is verified: an empty
    /// body is checked before the consumer runs, the rest of one it left unread after (its value is disposed on a mismatch).
    /// </summary>
    public async Task<T> ConsumeVerifiedAsync<T>(long length, string version, PeerBodyConsumer<T> consume, CancellationToken cancellationToken)
    {
        if (length == 0)
        {
            await DrainAndVerifyAsync(cancellationToken).ConfigureAwait(false);
        }

        T value = await consume(length, version, this, cancellationToken).ConfigureAwait(false);
        if (!Verified)
        {
            // The consumer stopped early: its value stands only if the rest arrives intact.
            try
            {
                await DrainAndVerifyAsync(cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                (value as IDisposable)?.Dispose();
                throw;
            }
        }

        return value;
    }

    /// <summary>Reads the rest of the body (discarding it) and checks the checksum; for consumers that stopped early and for empty bodies.</summary>
    public async Task DrainAndVerifyAsync(CancellationToken cancellationToken)
    {
        if (_remaining > 0)
        {
            byte[] scratch = System.Buffers.ArrayPool<byte>.Shared.Rent(64 << 10);
            try
            {
                while (await ReadAsync(scratch, cancellationToken).ConfigureAwait(false) > 0)
                {
                }
            }
            finally
            {
                System.Buffers.ArrayPool<byte>.Shared.Return(scratch);
            }
        }

        await VerifyAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    /// <inheritdoc />
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <inheritdoc />
    public override void Flush()
    {
    }

    /// <inheritdoc />
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    /// <summary>
    /// Receives the next message: a chunk (copied straight into <paramref name="destination"/> when possible,
    /// else buffered), the trailer, or the end of the stream.
    /// </summary>
    protected abstract ValueTask<BodyChunk> ReceiveChunkAsync(Memory<byte> destination, CancellationToken cancellationToken);

    /// <summary>Called once the checksum matched (e.g. to read the end of the call).</summary>
    protected virtual ValueTask OnVerifiedAsync(CancellationToken cancellationToken) => ValueTask.CompletedTask;

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _pendingOwner?.Dispose();
            _pendingOwner = null;
            _pending = default;
        }

        base.Dispose(disposing);
    }

    private static PeerTransferException Protocol(string what) => new(PeerTransferFailure.Protocol, $"The sender broke the peer protocol: {what}.");

    private int TakePending(Span<byte> destination)
    {
        int n = Math.Min(destination.Length, _pending.Length);
        _pending.Span[..n].CopyTo(destination);
        _pending = _pending[n..];
        if (_pending.IsEmpty)
        {
            _pendingOwner?.Dispose();
            _pendingOwner = null;
        }

        return n;
    }

    private async ValueTask VerifyAsync(CancellationToken cancellationToken)
    {
        if (_verified)
        {
            return;
        }

        BodyChunk trailer = await ReceiveChunkAsync(Memory<byte>.Empty, cancellationToken).ConfigureAwait(false);
        switch (trailer.Kind)
        {
            case BodyChunkKind.Trailer:
                break;
            case BodyChunkKind.End:
                throw new PeerTransferException(PeerTransferFailure.Transport, $"The sender stopped after all {Length} bytes but before the checksum.");
            default:
                trailer.Owner?.Dispose();
                throw Protocol($"more than the {Length} bytes announced");
        }

        ulong actual = _hash.GetCurrentHashAsUInt64();
        if (actual != trailer.Checksum)
        {
            throw new PeerTransferException(PeerTransferFailure.Corrupted, $"The body is corrupted: the XxHash3 of the {Length} bytes received is {actual:x16}, the sender's is {trailer.Checksum:x16}.");
        }

        _verified = true;
        await OnVerifiedAsync(cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>What <see cref="ChecksummedBodyStream"/>'s source delivered.</summary>
internal enum BodyChunkKind
{
    /// <summary>The stream ended.</summary>
    End,

    /// <summary><c>Count</c> bytes were written into the destination.</summary>
    Direct,

    /// <summary>The bytes are in <c>Data</c> (released with <c>Owner</c>).</summary>
    Buffered,

    /// <summary>The trailer: <c>Checksum</c>.</summary>
    Trailer,
}

/// <summary>One message of a body.</summary>
internal readonly record struct BodyChunk(BodyChunkKind Kind, int Count, ReadOnlyMemory<byte> Data, IDisposable? Owner, ulong Checksum)
{
    public static BodyChunk End => new(BodyChunkKind.End, 0, default, null, 0);

    public static BodyChunk Direct(int count) => new(BodyChunkKind.Direct, count, default, null, 0);

    public static BodyChunk Buffered(ReadOnlyMemory<byte> data, IDisposable? owner) => new(BodyChunkKind.Buffered, 0, data, owner, 0);

    public static BodyChunk Trailer(ulong checksum) => new(BodyChunkKind.Trailer, 0, default, null, checksum);
}
