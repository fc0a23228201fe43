using System.Threading.Channels;

namespace FaaSCache.Caching;

/// <summary>
/// §3.2, asynchronous persistence: the written objects not yet in storage, uploaded in order one at a time by one
/// background loop, each retried until it is stored or shutdown gives up on it (then it is a lost write); the counts
/// a flush waits on. Owns its queue, counters and lock; the cachelet gives it the upload and hears how each ended.
/// </summary>
internal sealed class WriteBackQueue : IDisposable
{
    private readonly Channel<CacheEntry> _queue = Channel.CreateUnbounded<CacheEntry>(new UnboundedChannelOptions { SingleReader = true });
    private readonly CancellationTokenSource _abandon = new();
    private readonly Lock _gate = new();
    private readonly List<(long Target, TaskCompletionSource Done)> _flushWaiters = [];
    private readonly List<string> _lost = [];
    private readonly Func<CacheEntry, CancellationToken, Task<string>> _upload;
    private readonly Action<CacheEntry, string?> _ended;
    private readonly ILogger _logger;
    private readonly Task _loop;
    private long _enqueued;
    private long _completed;

    /// <param name="upload">Stores an entry; returns storage's ETag.</param>
    /// <param name="ended">Called once per entry, after its upload (with the ETag) or once shutdown gave up on it (null).</param>
    /// <param name="logger">Logger.</param>
    public WriteBackQueue(Func<CacheEntry, CancellationToken, Task<string>> upload, Action<CacheEntry, string?> ended, ILogger logger)
    {
        _upload = upload;
        _ended = ended;
        _logger = logger;
        _loop = Task.Run(LoopAsync);
    }

    /// <summary>Gets or sets how long <see cref="StopAsync"/> waits for pending writes before giving up on them.</summary>
    public TimeSpan ShutdownFlushTimeout { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>Gets the writes not yet in storage.</summary>
    public long Pending => Interlocked.Read(ref _enqueued) - Interlocked.Read(ref _completed);

    /// <summary>Gets the keys whose write shutdown gave up on.</summary>
    public IReadOnlyList<string> Lost
    {
        get
        {
            lock (_gate)
            {
                return [.. _lost];
            }
        }
    }

    /// <summary>Queues <paramref name="entry"/> behind the writes before it.</summary>
    public void Enqueue(CacheEntry entry)
    {
        Interlocked.Increment(ref _enqueued);
        if (!_queue.Writer.TryWrite(entry))
        {
            throw new ObjectDisposedException(nameof(Cachelet), "The cachelet is shutting down and takes no more asynchronous writes.");
        }
    }

    /// <summary>Completes when every write queued before the call is in storage (or given up on).</summary>
    public Task FlushAsync(CancellationToken cancellationToken)
    {
        long target = Interlocked.Read(ref _enqueued);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            if (Interlocked.Read(ref _completed) >= target)
            {
                return Task.CompletedTask;
            }

            _flushWaiters.Add((target, done));
        }

        return done.Task.WaitAsync(cancellationToken);
    }

    /// <summary>Takes no more writes, waits up to <see cref="ShutdownFlushTimeout"/> for the queued ones, then gives up on the rest.</summary>
    public async Task StopAsync()
    {
        _queue.Writer.TryComplete();
        if (await Task.WhenAny(_loop, Task.Delay(ShutdownFlushTimeout)).ConfigureAwait(false) != _loop)
        {
            await _abandon.CancelAsync().ConfigureAwait(false);
            await _loop.ConfigureAwait(false);
        }

        Dispose();
    }

    /// <summary>Releases the shutdown signal (after <see cref="StopAsync"/>).</summary>
    public void Dispose() => _abandon.Dispose();

    private async Task LoopAsync()
    {
        await foreach (CacheEntry entry in _queue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            // In order, one at a time; a failure is retried (the storage pipeline retries too) until it succeeds or shutdown abandons it.
            for (int failures = 0; ; failures++)
            {
                try
                {
                    _ended(entry, await _upload(entry, _abandon.Token).ConfigureAwait(false));
                    break;
                }
                catch (Exception e) when (!_abandon.IsCancellationRequested)
                {
                    _logger.LogError(e, "Background write of {Key} failed (attempt {Attempt}); retrying", entry.Key, failures + 1);
                    try
                    {
                        await Task.Delay(TimeSpan.FromMilliseconds(Math.Min(5000, 200 << Math.Min(failures, 5))), _abandon.Token).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                    }
                }
                catch (Exception e)
                {
                    _logger.LogError(e, "Shutdown abandoned the background write of {Key}: it is not in storage", entry.Key);
                    lock (_gate)
                    {
                        _lost.Add(entry.Key);
                    }

                    _ended(entry, null);
                    break;
                }
            }

            Completed();
        }
    }

    private void Completed()
    {
        long done = Interlocked.Increment(ref _completed);
        List<TaskCompletionSource>? ready = null;
        lock (_gate)
        {
            for (int i = _flushWaiters.Count - 1; i >= 0; i--)
            {
                if (_flushWaiters[i].Target <= done)
                {
                    (ready ??= []).Add(_flushWaiters[i].Done);
                    _flushWaiters.RemoveAt(i);
                }
            }
        }

        ready?.ForEach(t => t.TrySetResult());
    }
}
