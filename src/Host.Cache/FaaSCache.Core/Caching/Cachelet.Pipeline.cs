using FaaSCache.SharedMemory;

namespace FaaSCache.Caching;

/// <summary>§3.2, remote misses in one pass: the owner streams a download to the requester while it fills its own map.</summary>
public sealed partial class Cachelet
{
    /// <summary>Objects from this size up are streamed to a requesting peer while the owner downloads them.</summary>
    public const long PipelineThreshold = 256 * 1024;

    // Set only around the owner's read for a peer: the download it starts publishes its fill (no signature threading).
    private readonly AsyncLocal<PipelineSlot?> _pipelineSlot = new();

    /// <summary>
    /// Serves a peer's get like <see cref="ServePeerGetAsync"/>, except that a miss the owner downloads itself is handed
    /// over as soon as its first bytes are in (<see cref="PeerGetServe.Progress"/>), so the transfer to the peer overlaps
    /// the download. The owner admits the object only once it is whole; if the download breaks, the peer is told.
    /// </summary>
    public async Task<PeerGetServe?> ServePeerGetPipelinedAsync(string key, bool fetchIfMissing, CancellationToken cancellationToken = default)
    {
        if (!fetchIfMissing)
        {
            return await ServePeerGetAsync(key, fetchIfMissing: false, cancellationToken).ConfigureAwait(false) is { } cached
                ? PeerGetServe.Whole(cached.Lease, cached.Hit)
                : null;
        }

        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        Metrics.PeerServed();
        return await ReadFollowingTheFillAsync(key, forward: false, cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public Task<PeerGetServe> ReadPipelinedAsync(string key, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        return ReadFollowingTheFillAsync(key, forward: true, cancellationToken);
    }

    /// <summary>A read whose storage download, if it makes one, is handed over as soon as its first bytes are in.</summary>
    private async Task<PeerGetServe> ReadFollowingTheFillAsync(string key, bool forward, CancellationToken cancellationToken)
    {
        var slot = new PipelineSlot();
        Task<ObjectLease> read;
        _pipelineSlot.Value = slot;
        try
        {
            // The read captures the slot in its execution context; ours forgets it right away.
            read = ReadCoreAsync(key, forward: forward, cancellationToken);
        }
        finally
        {
            _pipelineSlot.Value = null;
        }

        Task first = await Task.WhenAny(read, slot.Published.Task).ConfigureAwait(false);
        if (first == read || !slot.Published.Task.IsCompletedSuccessfully)
        {
            ObjectLease lease = await read.ConfigureAwait(false);
            return PeerGetServe.Whole(lease, lease.Source == ReadSource.LocalHit);
        }

        return PeerGetServe.Pipelined(slot.Published.Task.Result, read);
    }

    /// <summary>The fill a download into <paramref name="map"/> publishes, when a peer's read waits for one; else null.</summary>
    private FillProgress? Publish(SharedMemoryMap map, string? version)
    {
        if (version is null || map.ContentLength < PipelineThreshold || map.ContentLength > int.MaxValue || _pipelineSlot.Value is not { } slot || slot.Used)
        {
            return null;
        }

        // One download per read: a retry after a broken transfer is not followed (the peer was already told).
        slot.Used = true;
        var progress = new FillProgress(map, version);
        slot.Published.TrySetResult(progress);
        return progress;
    }

    /// <summary>Deletes a map whose fill failed, once the peer following it (if any) has let go of it.</summary>
    private void DeleteFailedFill(SharedMemoryMap map, FillProgress? progress, Exception failure)
    {
        if (progress is null)
        {
            _shm.Delete(map);
            return;
        }

        progress.Fail(failure);
        _ = progress.ReaderFinished.ContinueWith(_ => _shm.Delete(map), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private sealed class PipelineSlot
    {
        public TaskCompletionSource<FillProgress> Published { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public bool Used { get; set; }
    }
}
