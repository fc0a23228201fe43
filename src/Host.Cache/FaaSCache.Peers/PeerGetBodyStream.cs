namespace FaaSCache.Peers;

/// <summary>The body of a get, read from the call's reply stream; chunks land straight in the consumer's buffer when they fit.</summary>
internal sealed class PeerGetBodyStream : ChecksummedBodyStream
{
    private readonly IAsyncStreamReader<GetReplyFrame> _replies;
    private readonly CancellationTokenSource _timeout;
    private readonly TimeSpan _idleTimeout;
    private readonly ChunkSink? _sink;

    public PeerGetBodyStream(IAsyncStreamReader<GetReplyFrame> replies, long length, CancellationTokenSource timeout, TimeSpan idleTimeout, bool copyIntoDestination = true)
        : base(length)
    {
        _replies = replies;
        _timeout = timeout;
        _idleTimeout = idleTimeout;
        _sink = copyIntoDestination ? new ChunkSink() : null;
    }

    /// <summary>Gets the number of chunks copied straight into the destination (the rest went through a pooled buffer).</summary>
    public int DirectChunks { get; private set; }

    /// <summary>Gets the number of chunks that went through a pooled buffer.</summary>
    public int BufferedChunks { get; private set; }

    protected override async ValueTask<BodyChunk> ReceiveChunkAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (_sink is not null)
        {
            _sink.Destination = destination;
            GetReplyFrame.SetSink(_sink);
        }

        bool more;
        try
        {
            _timeout.CancelAfter(_idleTimeout);
            more = await _replies.MoveNext(cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw new PeerTransferException(PeerTransferFailure.Transport, $"The transfer broke after {Position} of {Length} bytes: {e.Status.StatusCode} {e.Status.Detail}", e);
        }
        finally
        {
            if (_sink is not null)
            {
                _sink.Destination = Memory<byte>.Empty;
                GetReplyFrame.SetSink(null);
            }
        }

        if (!more)
        {
            return BodyChunk.End;
        }

        GetReplyFrame frame = _replies.Current;
        switch (frame.Part)
        {
            case GetReply.PartOneofCase.Chunk when frame.DirectCount > 0:
                DirectChunks++;
                return BodyChunk.Direct(frame.DirectCount);
            case GetReply.PartOneofCase.Chunk:
                BufferedChunks++;
                return BodyChunk.Buffered(frame.Buffered, frame);
            case GetReply.PartOneofCase.Trailer:
                return BodyChunk.Trailer(frame.Checksum);
            default:
                throw new PeerTransferException(PeerTransferFailure.Protocol, $"The sender broke the peer protocol: a {frame.Part} message inside the body.");
        }
    }

    protected override async ValueTask OnVerifiedAsync(CancellationToken cancellationToken)
    {
        // Read the end of the call so it completes cleanly (status OK) instead of being reset on dispose.
        try
        {
            _timeout.CancelAfter(_idleTimeout);
            if (await _replies.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                _replies.Current.Dispose();
                throw new PeerTransferException(PeerTransferFailure.Protocol, "The sender broke the peer protocol: a message after the trailer.");
            }
        }
        catch (RpcException)
        {
            // The body is complete and verified; how the call ended no longer matters.
        }
    }
}
