namespace FaaSCache.Caching;

/// <summary>
/// A map being filled from storage that one reader may follow as the bytes arrive: the owner of a key streams a remote
/// miss to the requester while it downloads it (one pass, about max(download, transfer) rather than their sum). The
/// reader sees only bytes below the fill mark; if the fill fails, the reader is told and the map is deleted only after
/// the reader lets go of it (it may be inside a send of a slice of the map).
/// </summary>
public sealed class FillProgress
{
    private readonly object _gate = new();
    private readonly SharedMemoryMap _map;
    private readonly TaskCompletionSource _readerFinished = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private TaskCompletionSource _advanced = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _filled;
    private Exception? _failure;
    private bool _readerAttached;

    internal FillProgress(SharedMemoryMap map, string version)
    {
        _map = map;
        Version = version;
    }

    /// <summary>Gets the version (ETag) being downloaded.</summary>
    public string Version { get; }

    /// <summary>Gets the object's length.</summary>
    public long Length => _map.ContentLength;

    /// <summary>Gets the map's content; only the bytes below what <see cref="WaitAsync"/> returned are written.</summary>
    public ReadOnlyMemory<byte> Content => _map.Memory;

    /// <summary>
    /// Gets the map's file: a sender reads the fresh bytes from it (pread) rather than through this process's mapping,
    /// whose pages the fill never touched (a first touch costs a fault of ~13 µs per 4 KiB on this project's VMs).
    /// </summary>
    public string FilePath => _map.FilePath;

    /// <summary>Gets where the content starts in <see cref="FilePath"/>.</summary>
    public static int ContentOffset => SharedMemoryMap.HeaderSize;

    /// <summary>Gets a task that completes once the reader has let go of the map (at once if none ever followed it).</summary>
    internal Task ReaderFinished => _readerFinished.Task;

    /// <summary>
    /// Waits until more than <paramref name="position"/> bytes are filled (or the fill is complete) and returns how many
    /// are; throws the fill's failure as an <see cref="IOException"/> naming how far it got.
    /// </summary>
    public async ValueTask<long> WaitAsync(long position, CancellationToken cancellationToken)
    {
        while (true)
        {
            Task advanced;
            lock (_gate)
            {
                _readerAttached = true;
                if (_failure is not null)
                {
                    throw new IOException($"The download broke after {_filled} of {Length} bytes: {_failure.Message}", _failure);
                }

                if (_filled > position || _filled == Length)
                {
                    return _filled;
                }

                advanced = _advanced.Task;
            }

            await advanced.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Tells the fill that the reader no longer touches the map.</summary>
    public void ReaderDone() => _readerFinished.TrySetResult();

    /// <summary>Records that the first <paramref name="filled"/> bytes are written.</summary>
    internal void Advance(long filled)
    {
        TaskCompletionSource wake;
        lock (_gate)
        {
            if (filled <= _filled)
            {
                return;
            }

            _filled = filled;
            wake = _advanced;
            _advanced = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        wake.TrySetResult();
    }

    /// <summary>Ends the fill with <paramref name="failure"/>; a reader that never started is not waited for.</summary>
    internal void Fail(Exception failure)
    {
        TaskCompletionSource wake;
        lock (_gate)
        {
            _failure = failure;
            wake = _advanced;
            if (!_readerAttached)
            {
                _readerFinished.TrySetResult();
            }
        }

        wake.TrySetResult();
    }
}
