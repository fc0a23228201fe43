namespace FaaSCache.Peers;

/// <summary>
/// The body of a get that the owner sends over its bulk connection (<see cref="PeerBulkServer"/>): each read lands
/// straight from the socket in the consumer's buffer (no framing, no intermediate buffer), and the XxHash3 that follows the
/// bytes is checked in the read that completes the body. The connection stays open for the next request.
/// </summary>
internal sealed class PeerBulkBodyStream : ChecksummedBodyStream
{
    private readonly Socket _socket;
    private readonly CancellationTokenSource _timeout;
    private readonly TimeSpan _idleTimeout;
    private readonly byte[] _trailer = new byte[sizeof(ulong)];
    private ReadOnlyMemory<byte> _prefetched;

    /// <summary>Initializes a new instance of the <see cref="PeerBulkBodyStream"/> class over a connection whose next bytes are the body.</summary>
    /// <remarks><paramref name="prefetched"/>: the body's first bytes (and its checksum's), received with the reply's header.</remarks>
    public PeerBulkBodyStream(Socket socket, long length, CancellationTokenSource timeout, TimeSpan idleTimeout, ReadOnlyMemory<byte> prefetched = default)
        : base(length)
    {
        _prefetched = prefetched;
        _socket = socket;
        _timeout = timeout;
        _idleTimeout = idleTimeout;
    }

    /// <summary>Gets the number of bytes received with the header that the body and its checksum did not use.</summary>
    public int UnreadPrefetched => _prefetched.Length;

    /// <summary>A <c>G</c> request's bytes: magic, token, kind, flags (1 = fetch if missing), key length, key.</summary>
    public static byte[] GetRequest(string token, string key, bool fetchIfMissing)
    {
        byte[] tokenBytes = Encoding.ASCII.GetBytes(token);
        byte[] keyBytes = Encoding.UTF8.GetBytes(key);
        int at = PeerBulkServer.Magic.Length + 2 + tokenBytes.Length;
        byte[] request = new byte[at + 1 + 1 + 2 + keyBytes.Length];
        PeerBulkServer.Magic.CopyTo(request, 0);
        BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(PeerBulkServer.Magic.Length), checked((ushort)tokenBytes.Length));
        tokenBytes.CopyTo(request, PeerBulkServer.Magic.Length + 2);
        request[at++] = PeerBulkServer.KindGet;
        request[at++] = fetchIfMissing ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(at), checked((ushort)keyBytes.Length));
        keyBytes.CopyTo(request, at + 2);
        return request;
    }

    protected override async ValueTask<BodyChunk> ReceiveChunkAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        try
        {
            _timeout.CancelAfter(_idleTimeout);
            if (destination.IsEmpty)
            {
                // All bytes are in: what follows is their checksum.
                int got = TakePrefetched(_trailer);
                while (got < _trailer.Length)
                {
                    int read = await _socket.ReceiveAsync(_trailer.AsMemory(got), SocketFlags.None, _timeout.Token).ConfigureAwait(false);
                    if (read == 0)
                    {
                        return got == 0 ? BodyChunk.End : throw new PeerTransferException(PeerTransferFailure.Transport, "The bulk connection closed inside the checksum.");
                    }

                    got += read;
                }

                return BodyChunk.Trailer(BinaryPrimitives.ReadUInt64LittleEndian(_trailer));
            }

            if (!_prefetched.IsEmpty)
            {
                return BodyChunk.Direct(TakePrefetched(destination.Span));
            }

            int n = await _socket.ReceiveAsync(destination, SocketFlags.None, _timeout.Token).ConfigureAwait(false);
            return n == 0 ? BodyChunk.End : BodyChunk.Direct(n);
        }
        catch (Exception e) when (e is SocketException or IOException and not PeerTransferException)
        {
            throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk transfer broke after {Position} of {Length} bytes: {e.Message}", e);
        }
    }

    private int TakePrefetched(Span<byte> destination)
    {
        int n = Math.Min(destination.Length, _prefetched.Length);
        _prefetched.Span[..n].CopyTo(destination);
        _prefetched = _prefetched[n..];
        return n;
    }
}

/// <summary>No bulk connection could be made to the owner (nothing was received): the get can be asked again without bulk.</summary>
internal sealed class PeerBulkUnreachableException(string message, Exception inner) : IOException(message, inner);
