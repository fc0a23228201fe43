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
    public const int OneSendSize = 64 << 10;

    /// <summary>
    /// Sends the body. With <paramref name="file"/> the bytes are read from the map's file (pread into a pooled buffer,
    /// from <paramref name="fileOffset"/>) instead of through <paramref name="content"/>, this process's mapping: for a map
    /// this process just filled through its file, whose mapped pages would each fault on first touch.
    /// </summary>
    public static async Task SendAsync(
        Socket connection,
        ReadOnlyMemory<byte> prefix,
        ReadOnlyMemory<byte> content,
        Func<long, CancellationToken, ValueTask<long>>? waitFor,
        Func<Task>? beforeTrailer,
        Func<long, ReadOnlyMemory<byte>, CancellationToken, ValueTask<ReadOnlyMemory<byte>>>? tamper,
        CancellationToken cancellationToken,
        Microsoft.Win32.SafeHandles.SafeFileHandle? file = null,
        long fileOffset = 0)
    {
        var hash = new XxHash3();
        long total = content.Length;
        if (waitFor is null && beforeTrailer is null && file is null && total <= OneSendSize)
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
        byte[]? staging = file is null ? null : ArrayPool<byte>.Shared.Rent(SliceSize);
        try
        {
            long sent = 0;
            while (sent < total)
            {
                // A download in progress: wait for a quarter slice at least (or the end), as the gRPC path does.
                long available = waitFor is null ? total : await waitFor(Math.Min(sent + (SliceSize / 4), total) - 1, cancellationToken).ConfigureAwait(false);
                while (sent < available)
                {
                    int n = (int)Math.Min(SliceSize, available - sent);
                    ReadOnlyMemory<byte> slice = staging is null ? content.Slice((int)sent, n) : ReadFile(file!, staging, fileOffset + sent, n);
                    hash.Append(slice.Span);
                    ReadOnlyMemory<byte> wire = tamper is null ? slice : await tamper(sent, slice, cancellationToken).ConfigureAwait(false);
                    await SendAllAsync(connection, wire, cancellationToken).ConfigureAwait(false);
                    sent += n;
                }
            }
        }
        finally
        {
            if (staging is not null)
            {
                ArrayPool<byte>.Shared.Return(staging);
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

    private static ReadOnlyMemory<byte> ReadFile(Microsoft.Win32.SafeHandles.SafeFileHandle file, byte[] staging, long offset, int count)
    {
        for (int read = 0; read < count;)
        {
            int n = RandomAccess.Read(file, staging.AsSpan(read, count - read), offset + read);
            if (n == 0)
            {
                throw new IOException($"The map's file ended at {offset + read}, before the {count} bytes to send.");
            }

            read += n;
        }

        return staging.AsMemory(0, count);
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
