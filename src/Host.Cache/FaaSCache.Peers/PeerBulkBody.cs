using System.Buffers;
using System.Buffers.Binary;
using System.IO.Hashing;
using System.Net.Sockets;

namespace FaaSCache.Peers;

/// <summary>
/// Sends one body on a bulk connection: a prefix (status and header), the bytes straight from the owner's map in slices
/// hashed just before they go (waiting for bytes still being downloaded, for a pipelined miss), then their XxHash3.
/// A small body goes in one send with its prefix and checksum.
/// </summary>
internal static class PeerBulkBody
{
    /// <summary>Bytes per send: hashed just before they go, so they are still in the core's cache.</summary>
    public const int SliceSize = 1 << 20;

    /// <summary>Bodies up to this size are copied into one buffer with their prefix and checksum: one send.</summary>
    private const int OneSendSize = 64 << 10;

    public static async Task SendAsync(
        Socket connection,
        ReadOnlyMemory<byte> prefix,
        ReadOnlyMemory<byte> content,
        Func<long, CancellationToken, ValueTask<long>>? waitFor,
        Func<Task>? beforeTrailer,
        Func<long, ReadOnlyMemory<byte>, CancellationToken, ValueTask<ReadOnlyMemory<byte>>>? tamper,
        CancellationToken cancellationToken)
    {
        var hash = new XxHash3();
        long total = content.Length;
        if (waitFor is null && beforeTrailer is null && total <= OneSendSize)
        {
            hash.Append(content.Span);
            ReadOnlyMemory<byte> wire = tamper is null ? content : await tamper(0, content, cancellationToken).ConfigureAwait(false);
            int length = prefix.Length + wire.Length + sizeof(ulong);
            byte[] buffer = ArrayPool<byte>.Shared.Rent(length);
            try
            {
                prefix.CopyTo(buffer);
                wire.CopyTo(buffer.AsMemory(prefix.Length));
                BinaryPrimitives.WriteUInt64LittleEndian(buffer.AsSpan(prefix.Length + wire.Length), hash.GetCurrentHashAsUInt64());
                await SendAllAsync(connection, buffer.AsMemory(0, length), cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }

            return;
        }

        await SendAllAsync(connection, prefix, cancellationToken).ConfigureAwait(false);
        long sent = 0;
        while (sent < total)
        {
            // A download in progress: wait for a quarter slice at least (or the end), as the gRPC path does.
            long available = waitFor is null ? total : await waitFor(Math.Min(sent + (SliceSize / 4), total) - 1, cancellationToken).ConfigureAwait(false);
            while (sent < available)
            {
                ReadOnlyMemory<byte> slice = content.Slice((int)sent, (int)Math.Min(SliceSize, available - sent));
                hash.Append(slice.Span);
                ReadOnlyMemory<byte> wire = tamper is null ? slice : await tamper(sent, slice, cancellationToken).ConfigureAwait(false);
                await SendAllAsync(connection, wire, cancellationToken).ConfigureAwait(false);
                sent += slice.Length;
            }
        }

        if (beforeTrailer is not null)
        {
            await beforeTrailer().ConfigureAwait(false);
        }

        byte[] trailer = new byte[sizeof(ulong)];
        BinaryPrimitives.WriteUInt64LittleEndian(trailer, hash.GetCurrentHashAsUInt64());
        await SendAllAsync(connection, trailer, cancellationToken).ConfigureAwait(false);
    }

    public static async ValueTask ReceiveExactlyAsync(Socket socket, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (!buffer.IsEmpty)
        {
            int n = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                throw new EndOfStreamException($"The connection closed with {buffer.Length} bytes still expected.");
            }

            buffer = buffer[n..];
        }
    }

    public static async ValueTask SendAllAsync(Socket socket, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        while (!buffer.IsEmpty)
        {
            int n = await socket.SendAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
            buffer = buffer[n..];
        }
    }
}
