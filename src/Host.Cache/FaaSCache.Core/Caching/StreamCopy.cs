namespace FaaSCache.Caching;

/// <summary>
/// Copies a stream into a map through the map's file (pwrite), not through its mapping. On this project's VMs a first
/// touch of each 4 KiB page through a fresh mapping costs about 13 µs (a fault the hypervisor sees), 0.4-0.7 s per
/// 128 MB even after MADV_POPULATE_WRITE, while the kernel writes the same pages through its own map at memory speed
/// (benchmarks/results/profiles, benchmarks/README.md "Where a local miss's time went"). Readers that map the object
/// (workers, peers) fault in only the pages they read, as they always did in their own address space.
/// </summary>
internal static class StreamCopy
{
    /// <summary>The staging buffer between the socket and the file: small enough to stay in the core's cache.</summary>
    public const int StagingBufferSize = 256 * 1024;

    /// <summary>
    /// Fills the whole map from <paramref name="source"/>; returns the bytes written into it (its content length).
    /// <paramref name="progress"/>, when given, learns each advance (a peer streams the bytes as they land).
    /// </summary>
    public static Task<long> FillAsync(Stream source, SharedMemoryMap map, CancellationToken cancellationToken, FillProgress? progress = null) =>
        FillRangeAsync(source, map, 0, map.ContentLength, cancellationToken, progress);

    /// <summary>
    /// Fills content bytes [<paramref name="offset"/>, <paramref name="offset"/> + <paramref name="length"/>) of the map
    /// from <paramref name="source"/> (a scaled load's range); returns <paramref name="length"/>. <paramref name="progress"/>,
    /// when given, learns the fill mark after each write.
    /// </summary>
    public static async Task<long> FillRangeAsync(Stream source, SharedMemoryMap map, long offset, long length, CancellationToken cancellationToken, FillProgress? progress = null)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent((int)Math.Clamp(length, 1, StagingBufferSize));
        try
        {
            long filled = 0;
            while (filled < length)
            {
                int n = await source.ReadAsync(buffer.AsMemory(0, (int)Math.Min(buffer.Length, length - filled)), cancellationToken).ConfigureAwait(false);
                if (n == 0)
                {
                    throw new IOException($"The stream ended after {filled} of {length} bytes.");
                }

                map.Write(buffer.AsSpan(0, n), offset + filled);
                filled += n;
                progress?.Advance(offset + filled);
            }

            return length;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
