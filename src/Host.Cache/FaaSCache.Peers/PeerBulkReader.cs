namespace FaaSCache.Peers;

/// <summary>
/// Reads a bulk connection's small messages (a request, a reply's status and header) from one buffer: each receive takes
/// whatever has arrived, so a request or a small object's whole reply costs one receive instead of one per field. What is
/// left after the header (the first bytes of a body) is handed to the body's stream. Requests are never pipelined on a
/// connection, so every byte received belongs to the message being read.
/// </summary>
internal sealed class PeerBulkReader : IDisposable
{
    private readonly Socket _socket;
    private byte[] _buffer;
    private int _start;
    private int _end;

    /// <summary>Initializes a new instance of the <see cref="PeerBulkReader"/> class with a pooled buffer of at least <paramref name="capacity"/> bytes.</summary>
    public PeerBulkReader(Socket socket, int capacity)
    {
        _socket = socket;
        _buffer = ArrayPool<byte>.Shared.Rent(capacity);
    }

    /// <summary>Gets the number of bytes received and not yet read.</summary>
    public int Buffered => _end - _start;

    /// <summary>Receives what has arrived (at least one byte); false when the other side closed the connection.</summary>
    public async ValueTask<bool> FillAsync(CancellationToken cancellationToken)
    {
        if (_start == _end)
        {
            _start = _end = 0;
        }

        if (_end == _buffer.Length)
        {
            Grow(_buffer.Length * 2);
        }

        int n = await _socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, cancellationToken).ConfigureAwait(false);
        _end += n;
        return n > 0;
    }

    /// <summary>The next <paramref name="count"/> bytes (valid until the next call); throws <see cref="EndOfStreamException"/> when the connection closes first.</summary>
    public async ValueTask<ReadOnlyMemory<byte>> ReadExactlyAsync(int count, CancellationToken cancellationToken)
    {
        if (_buffer.Length - _start < count)
        {
            Grow(count);
        }

        while (Buffered < count)
        {
            if (!await FillAsync(cancellationToken).ConfigureAwait(false))
            {
                throw new EndOfStreamException($"The connection closed with {count - Buffered} bytes still expected.");
            }
        }

        ReadOnlyMemory<byte> message = _buffer.AsMemory(_start, count);
        _start += count;
        return message;
    }

    /// <summary>The bytes received beyond what was read (valid until this reader is disposed); the reader is empty afterwards.</summary>
    public ReadOnlyMemory<byte> TakeBuffered()
    {
        ReadOnlyMemory<byte> rest = _buffer.AsMemory(_start, Buffered);
        _start = _end;
        return rest;
    }

    /// <inheritdoc />
    public void Dispose()
    {
        byte[] buffer = Interlocked.Exchange(ref _buffer, []);
        if (buffer.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Moves the unread bytes to the start of a buffer with room for <paramref name="count"/> bytes at least.</summary>
    private void Grow(int count)
    {
        byte[] old = _buffer;
        byte[] next = ArrayPool<byte>.Shared.Rent(Math.Max(count, old.Length));
        old.AsSpan(_start, Buffered).CopyTo(next);
        _end = Buffered;
        _start = 0;
        _buffer = next;
        ArrayPool<byte>.Shared.Return(old);
    }
}
