namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>
/// Records the order of data fetches (snapshot blobs left out), and can hold the first fetch of one key until it is
/// cancelled: a download the Load Daemon has under way when an invocation starts.
/// </summary>
internal sealed class RecordingBlobStore(IBlobStore inner) : DelegatingBlobStore(inner)
{
    private readonly ConcurrentQueue<string> _fetches = new();
    private int _held;

    /// <summary>Gets or sets a key whose first fetch blocks until cancelled.</summary>
    public string? HoldFirstFetchOf { get; set; }

    /// <summary>Gets a task that completes when the held fetch has started.</summary>
    public TaskCompletionSource HeldFetchStarted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Gets the data keys fetched, in order (a cancelled fetch included).</summary>
    public IReadOnlyList<string> Fetches => [.. _fetches];

    public override async Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        if (!key.StartsWith(SnapshotStore.Container + "/", StringComparison.Ordinal))
        {
            _fetches.Enqueue(key);
        }

        if (key == HoldFirstFetchOf && Interlocked.Exchange(ref _held, 1) == 0)
        {
            HeldFetchStarted.TrySetResult();
            await Task.Delay(Timeout.Infinite, cancellationToken);
        }

        return await base.FetchAsync(key, ifNoneMatch, consume, cancellationToken);
    }
}
