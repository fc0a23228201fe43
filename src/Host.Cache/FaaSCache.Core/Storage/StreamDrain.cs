namespace FaaSCache.Storage;

/// <summary>Reads a stream to its end and throws the bytes away: what a transfer probe measures.</summary>
public static class StreamDrain
{
    /// <summary>Reads <paramref name="content"/> to its end through a pooled buffer.</summary>
    /// <param name="content">The stream.</param>
    /// <param name="bufferSize">The buffer's size.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The bytes read.</returns>
    public static async Task<long> CountAsync(Stream content, int bufferSize, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(content);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(bufferSize);
        try
        {
            long received = 0;
            int n;
            while ((n = await content.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0)
            {
                received += n;
            }

            return received;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
