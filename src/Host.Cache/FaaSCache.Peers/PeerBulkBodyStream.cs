using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using Grpc.Core;

namespace FaaSCache.Peers;

/// <summary>
/// The body of a get that the owner sends over its bulk connection (<see cref="PeerBulkServer"/>): each read lands
/// straight from the socket in the consumer's buffer (no framing, no intermediate buffer), the XxHash3 that follows the
/// bytes is checked in the read that completes the body, and the get's gRPC call (when there is one) is read to its end
/// afterwards. A body of a <c>G</c> request leaves the connection open for the next request.
/// </summary>
internal sealed class PeerBulkBodyStream : ChecksummedBodyStream
{
    private readonly Socket _socket;
    private readonly IAsyncStreamReader<GetReplyFrame>? _replies;
    private readonly CancellationTokenSource _timeout;
    private readonly TimeSpan _idleTimeout;
    private readonly bool _ownsSocket;
    private readonly byte[] _trailer = new byte[sizeof(ulong)];
    private ReadOnlyMemory<byte> _prefetched;

    /// <summary>Initializes a new instance of the <see cref="PeerBulkBodyStream"/> class over a connection whose next bytes are the body.</summary>
    /// <remarks><paramref name="prefetched"/>: the body's first bytes (and its checksum's), received with the reply's header.</remarks>
    public PeerBulkBodyStream(Socket socket, long length, IAsyncStreamReader<GetReplyFrame>? replies, CancellationTokenSource timeout, TimeSpan idleTimeout, bool ownsSocket, ReadOnlyMemory<byte> prefetched = default)
        : base(length)
    {
        _prefetched = prefetched;
        _socket = socket;
        _replies = replies;
        _timeout = timeout;
        _idleTimeout = idleTimeout;
        _ownsSocket = ownsSocket;
    }

    /// <summary>Gets the number of bytes received with the header that the body and its checksum did not use.</summary>
    public int UnreadPrefetched => _prefetched.Length;

    /// <summary>
    /// Connects to the owner's bulk port, presents <paramref name="token"/> and <paramref name="ticket"/> and waits for its
    /// OK. Throws <see cref="PeerBulkUnreachableException"/> when no connection could be made (the caller may ask again
    /// without bulk), <see cref="PeerTransferException"/> when the owner refused or broke off.
    /// </summary>
    public static async Task<PeerBulkBodyStream> OpenAsync(string host, int port, string token, ReadOnlyMemory<byte> ticket, long length, IAsyncStreamReader<GetReplyFrame> replies, CancellationTokenSource timeout, TimeSpan idleTimeout, TimeSpan connectTimeout)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using (var connect = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token))
            {
                connect.CancelAfter(connectTimeout);
                try
                {
                    await socket.ConnectAsync(host, port, connect.Token).ConfigureAwait(false);
                }
                catch (Exception e) when (e is SocketException || (e is OperationCanceledException && !timeout.IsCancellationRequested))
                {
                    throw new PeerBulkUnreachableException($"No bulk connection to {host}:{port}: {e.Message}", e);
                }
            }

            byte[] request = Request(token, PeerBulkServer.KindTicket, ticket.Length, out int at);
            ticket.CopyTo(request.AsMemory(at));
            byte[] status = new byte[1];
            timeout.CancelAfter(idleTimeout);
            try
            {
                await PeerBulkServer.SendAllAsync(socket, request, timeout.Token).ConfigureAwait(false);
                await PeerBulkServer.ReceiveExactlyAsync(socket, status, timeout.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is SocketException or IOException)
            {
                throw new PeerTransferException(PeerTransferFailure.Transport, $"The bulk connection broke before the body: {e.Message}", e);
            }

            return status[0] switch
            {
                PeerBulkServer.StatusOk => new PeerBulkBodyStream(socket, length, replies, timeout, idleTimeout, ownsSocket: true),
                PeerBulkServer.StatusRefused => throw new PeerTransferException(PeerTransferFailure.Refused, "the bulk connection's token was refused"),
                PeerBulkServer.StatusUnknownTicket => throw new PeerTransferException(PeerTransferFailure.Protocol, "The owner does not know the bulk ticket it issued."),
                _ => throw new PeerTransferException(PeerTransferFailure.Protocol, $"The owner answered the bulk request with status {status[0]}."),
            };
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>A request's bytes: magic, token, kind, then <paramref name="extra"/> bytes the caller fills from <paramref name="at"/>.</summary>
    public static byte[] Request(string token, byte kind, int extra, out int at)
    {
        byte[] tokenBytes = Encoding.ASCII.GetBytes(token);
        byte[] request = new byte[PeerBulkServer.Magic.Length + 2 + tokenBytes.Length + 1 + extra];
        PeerBulkServer.Magic.CopyTo(request, 0);
        BinaryPrimitives.WriteUInt16BigEndian(request.AsSpan(PeerBulkServer.Magic.Length), checked((ushort)tokenBytes.Length));
        tokenBytes.CopyTo(request, PeerBulkServer.Magic.Length + 2);
        at = PeerBulkServer.Magic.Length + 2 + tokenBytes.Length;
        request[at++] = kind;
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

    protected override async ValueTask OnVerifiedAsync(CancellationToken cancellationToken)
    {
        // The owner ends the call once it has sent everything: read that end, so the call completes cleanly.
        if (_replies is null)
        {
            return;
        }

        try
        {
            _timeout.CancelAfter(_idleTimeout);
            if (await _replies.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                _replies.Current.Dispose();
                throw new PeerTransferException(PeerTransferFailure.Protocol, "The sender broke the peer protocol: a message after a bulk header.");
            }
        }
        catch (RpcException)
        {
            // The body is complete and verified; how the call ended no longer matters.
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && _ownsSocket)
        {
            _socket.Dispose();
        }

        base.Dispose(disposing);
    }
}

/// <summary>No bulk connection could be made to the owner (nothing was received): the get can be asked again without bulk.</summary>
internal sealed class PeerBulkUnreachableException(string message, Exception inner) : IOException(message, inner);
