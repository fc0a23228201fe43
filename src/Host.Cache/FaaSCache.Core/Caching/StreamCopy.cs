using FaaSCache.SharedMemory;

namespace FaaSCache.Caching;

/// <summary>Copies a stream into a map, reading straight into the mapped pages.</summary>
internal static class StreamCopy
{
    /// <summary>Objects from this size up get their pages populated on another core while the bytes arrive.</summary>
    public const long PrefaultThreshold = 4L << 20;

    /// <summary>
    /// Fills the whole map from <paramref name="source"/>; returns the bytes written into it (its content length).
    /// <paramref name="progress"/>, when given, learns each advance (a peer streams the bytes as they land).
    /// </summary>
    public static async Task<long> FillAsync(Stream source, SharedMemoryMap map, CancellationToken cancellationToken, FillProgress? progress = null)
    {
        Task prefault = map.ContentLength >= PrefaultThreshold ? map.PrefaultAsync() : Task.CompletedTask;
        try
        {
            await CopyAsync(source, map, progress, cancellationToken).ConfigureAwait(false);
            return map.ContentLength;
        }
        finally
        {
            // The map must outlive the populating thread, whatever happened to the copy.
            await prefault.ConfigureAwait(false);
        }
    }

    private static async Task CopyAsync(Stream source, SharedMemoryMap map, FillProgress? progress, CancellationToken cancellationToken)
    {
        long length = map.ContentLength;
        if (length <= int.MaxValue)
        {
            Memory<byte> target = map.Memory;
            int filled = 0;
            while (filled < length)
            {
                int n = await source.ReadAsync(target[filled..], cancellationToken).ConfigureAwait(false);
                if (n == 0)
                {
                    throw new IOException($"The stream ended after {filled} of {length} bytes.");
                }

                filled += n;
                progress?.Advance(filled);
            }
        }
        else
        {
            await using Stream target = map.OpenWrite();
            await source.CopyToAsync(target, 1 << 20, cancellationToken).ConfigureAwait(false);
            if (target.Position != length)
            {
                throw new IOException($"The stream ended after {target.Position} of {length} bytes.");
            }
        }
    }
}
