using System.IO.Pipelines;
using Microsoft.Win32.SafeHandles;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// Sends a cached object's bytes as a response body: read from the map's file (pread) straight into the response's
/// pipe, a slice at a time, each flushed before the next is read. One copy (page cache to the socket's buffer), no
/// page fault in this process's mapping (whose pages a fill through the file never touched: ~13 µs each on this
/// project's VMs), and at most a slice held per response however large the object (a single write of the whole
/// object would stage all of it in the server's pipe before the first flush).
/// </summary>
internal static class BlobBodySender
{
    /// <summary>Bodies up to this size are written from the mapping in one write (one send, no file to open).</summary>
    public const int OneWriteSize = 64 * 1024;

    /// <summary>How much is read and flushed at a time.</summary>
    public const int SliceSize = 256 * 1024;

    /// <summary>
    /// Sends bytes [<paramref name="start"/>, <paramref name="start"/> + <paramref name="count"/>) of the content in
    /// <paramref name="file"/> (which starts at <paramref name="contentOffset"/>); <paramref name="available"/>, when
    /// given, waits until more than a position's bytes are written and returns how many are (a map still filling).
    /// </summary>
    public static async Task SendAsync(HttpResponse response, SafeFileHandle file, long contentOffset, long start, long count, Func<long, CancellationToken, ValueTask<long>>? available, CancellationToken cancellationToken)
    {
        PipeWriter writer = response.BodyWriter;
        await response.StartAsync(cancellationToken).ConfigureAwait(false);
        long position = start;
        long end = start + count;
        while (position < end)
        {
            long ready = available is null ? end : Math.Min(await available(position, cancellationToken).ConfigureAwait(false), end);
            while (position < ready)
            {
                int want = (int)Math.Min(SliceSize, ready - position);
                Memory<byte> memory = writer.GetMemory(want);
                int n = RandomAccess.Read(file, memory.Span[..Math.Min(want, memory.Length)], contentOffset + position);
                if (n == 0)
                {
                    throw new IOException($"The map's file ended at content offset {position}, before the {end - position} bytes left to send.");
                }

                writer.Advance(n);
                position += n;
                FlushResult flushed = await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
                if (flushed.IsCompleted || flushed.IsCanceled)
                {
                    throw new OperationCanceledException("The client stopped reading the response.");
                }
            }
        }
    }

    /// <summary>Opens a map's file for reading beside its writer and the cache's deleter.</summary>
    public static SafeFileHandle Open(string path) => File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
}
