namespace FaaSCache.Peers;

/// <summary>The body of a put, read from the request stream on the owner.</summary>
internal sealed class PeerPutBodyStream(IAsyncStreamReader<PutRequest> requests, long length) : ChecksummedBodyStream(length)
{
    protected override async ValueTask<BodyChunk> ReceiveChunkAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        bool more;
        try
        {
            more = await requests.MoveNext(cancellationToken).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            throw new PeerTransferException(PeerTransferFailure.Transport, $"The writer went away after {Position} of {Length} bytes.", e);
        }

        if (!more)
        {
            return BodyChunk.End;
        }

        PutRequest message = requests.Current;
        return message.PartCase switch
        {
            PutRequest.PartOneofCase.Chunk => BodyChunk.Buffered(message.Chunk.Memory, null),
            PutRequest.PartOneofCase.Trailer => BodyChunk.Trailer(message.Trailer.Xxhash3),
            _ => throw new PeerTransferException(PeerTransferFailure.Protocol, $"The sender broke the peer protocol: a {message.PartCase} message inside the body."),
        };
    }
}
