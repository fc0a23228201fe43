using System.Threading.Channels;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>Asynchronous persistence: one ordered background queue, flushed on shutdown.</summary>
public sealed partial class Cachelet
{
    private readonly Channel<CacheEntry> _writeQueue = Channel.CreateUnbounded<CacheEntry>(new UnboundedChannelOptions { SingleReader = true });
    private readonly CancellationTokenSource _abandonWriteBack = new();
    private readonly List<(long Target, TaskCompletionSource Done)> _flushWaiters = [];
    private readonly List<string> _lostWrites = [];
    private readonly Task _writeBack;
    private long _enqueuedWrites;
    private long _completedWrites;

    /// <summary>Gets or sets how long disposal waits for pending writes before giving up on them (they are logged as lost).</summary>
    public TimeSpan ShutdownFlushTimeout { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>Gets the asynchronous writes not yet in storage.</summary>
    public long PendingWrites => Interlocked.Read(ref _enqueuedWrites) - Interlocked.Read(ref _completedWrites);

    /// <summary>Gets the keys whose asynchronous write was abandoned at shutdown.</summary>
    public IReadOnlyList<string> LostWrites
    {
        get
        {
            lock (_gate)
            {
                return [.. _lostWrites];
            }
        }
    }

    private Task StartWriteBack() => Task.Run(WriteBackLoopAsync);

    private void EnqueueWriteBack(CacheEntry entry)
    {
        Interlocked.Increment(ref _enqueuedWrites);
        if (!_writeQueue.Writer.TryWrite(entry))
        {
            throw new ObjectDisposedException(nameof(Cachelet), "The cachelet is shutting down and takes no more asynchronous writes.");
        }
    }

    private async Task WriteBackLoopAsync()
    {
        await foreach (CacheEntry entry in _writeQueue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            // In order, one at a time; a failure is retried (the storage pipeline retries too) until it succeeds or shutdown abandons it.
            for (int failures = 0; ; failures++)
            {
                try
                {
                    // Tagged with the version the write was announced under (cache triggers, other members): a poll that
                    // lists the blob later knows it for the same write.
                    string etag = await UploadAsync(entry.Key, entry.Map, _abandonWriteBack.Token, writeId: entry.Version).ConfigureAwait(false);
                    // The entry keeps the version the other members compare against (the pending one): switching it to
                    // storage's ETag would make every other copy look stale and move the whole object again.
                    lock (_gate)
                    {
                        entry.Dirty = false;
                    }

                    Persisted?.Invoke(this, new BlobWrittenEventArgs(entry.Key, etag));
                    break;
                }
                catch (Exception e) when (!_abandonWriteBack.IsCancellationRequested)
                {
                    _logger.LogError(e, "Background write of {Key} failed (attempt {Attempt}); retrying", entry.Key, failures + 1);
                    try
                    {
                        await Task.Delay(TimeSpan.FromMilliseconds(Math.Min(5000, 200 << Math.Min(failures, 5))), _abandonWriteBack.Token).ConfigureAwait(false);
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
                        entry.Dirty = false;
                        _lostWrites.Add(entry.Key);
                    }

                    break;
                }
            }

            Release(entry);
            CompleteWrite();
        }
    }

    private void CompleteWrite()
    {
        long done = Interlocked.Increment(ref _completedWrites);
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

    private Task WaitForWriteBackAsync(CancellationToken cancellationToken)
    {
        long target = Interlocked.Read(ref _enqueuedWrites);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            if (Interlocked.Read(ref _completedWrites) >= target)
            {
                return Task.CompletedTask;
            }

            _flushWaiters.Add((target, done));
        }

        return done.Task.WaitAsync(cancellationToken);
    }

    private async Task StopWriteBackAsync()
    {
        _writeQueue.Writer.TryComplete();
        if (await Task.WhenAny(_writeBack, Task.Delay(ShutdownFlushTimeout)).ConfigureAwait(false) != _writeBack)
        {
            await _abandonWriteBack.CancelAsync().ConfigureAwait(false);
            await _writeBack.ConfigureAwait(false);
        }

        _abandonWriteBack.Dispose();
    }
}
