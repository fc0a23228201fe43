using FaaSCache.Storage;

namespace FaaSCache.Testing;

/// <summary>
/// Where a <see cref="FaultyBlobStore"/> injects its fault into every download body: once <see cref="At"/> bytes have been
/// handed out, the body breaks (an <see cref="IOException"/>) or holds until <see cref="Release"/>. Tests then decide
/// "the transfer was half-way" by the order of events, not by a clock.
/// </summary>
public sealed class DownloadFault
{
    private readonly TaskCompletionSource _reached = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private DownloadFault(long at, bool breaks)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(at);
        At = at;
        Breaks = breaks;
    }

    /// <summary>Gets the byte offset of the fault.</summary>
    public long At { get; }

    /// <summary>Gets a value indicating whether the body breaks there (else it holds).</summary>
    public bool Breaks { get; }

    /// <summary>Gets a task that completes when a download first reached <see cref="At"/>.</summary>
    public Task Reached => _reached.Task;

    /// <summary>Every download breaks once it has handed out <paramref name="bytes"/> bytes.</summary>
    public static DownloadFault BreakAt(long bytes) => new(bytes, breaks: true);

    /// <summary>Every download holds once it has handed out <paramref name="bytes"/> bytes, until <see cref="Release"/>.</summary>
    public static DownloadFault HoldAt(long bytes) => new(bytes, breaks: false);

    /// <summary>Lets held downloads go on.</summary>
    public void Release() => _released.TrySetResult();

    /// <summary>Called by a body at the fault: breaks it or waits for <see cref="Release"/>.</summary>
    internal async Task ArriveAsync(long position, CancellationToken cancellationToken)
    {
        _reached.TrySetResult();
        if (Breaks)
        {
            throw new IOException($"Connection broken mid-transfer at byte {position} (injected by the test).");
        }

        await _released.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>Fault injection over a real store: every download body goes through a <see cref="DownloadFault"/>.</summary>
public sealed class FaultyBlobStore(IBlobStore inner, DownloadFault fault) : DelegatingBlobStore(inner)
{
    /// <inheritdoc />
    public override Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
        => Inner.FetchAsync(key, ifNoneMatch, (length, etag, content, token) => consume(length, etag, new FaultyStream(content, fault), token), cancellationToken);
}

/// <summary>A read-only body that reads up to the fault's offset exactly, then breaks or holds there (so it happens at the same byte every time).</summary>
public sealed class FaultyStream(Stream inner, DownloadFault fault) : Stream
{
    private long _position;

    /// <inheritdoc />
    public override bool CanRead => true;

    /// <inheritdoc />
    public override bool CanSeek => false;

    /// <inheritdoc />
    public override bool CanWrite => false;

    /// <inheritdoc />
    public override long Length => throw new NotSupportedException();

    /// <inheritdoc />
    public override long Position { get => _position; set => throw new NotSupportedException(); }

    /// <inheritdoc />
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_position >= fault.At)
        {
            await fault.ArriveAsync(_position, cancellationToken).ConfigureAwait(false);
        }

        int max = _position < fault.At ? (int)Math.Min(buffer.Length, fault.At - _position) : buffer.Length;
        int n = await inner.ReadAsync(buffer[..max], cancellationToken).ConfigureAwait(false);
        _position += n;
        return n;
    }

    /// <inheritdoc />
    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    /// <inheritdoc />
    public override void Flush()
    {
    }

    /// <inheritdoc />
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void SetLength(long value) => throw new NotSupportedException();

    /// <inheritdoc />
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
