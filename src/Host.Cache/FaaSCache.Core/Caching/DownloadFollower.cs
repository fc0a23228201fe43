namespace FaaSCache.Caching;

/// <summary>
/// The optional progress of a read (<see cref="IObjectCache.ReadAsync(string, DownloadFollower?, CancellationToken)"/>):
/// given to a read, it is handed the storage download that read makes (objects from
/// <see cref="Cachelet.PipelineThreshold"/> bytes up) as soon as its first bytes are in, so a reader that streams the
/// object on (the SDK endpoint, an owner serving a peer's remote miss) overlaps the download instead of waiting for the
/// read's lease. The object is admitted only once it is whole. One download per read: a retry after a broken transfer
/// is not followed (the follower was already handed the first one).
/// </summary>
public sealed class DownloadFollower
{
    private readonly TaskCompletionSource<FillProgress> _published = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Gets the download the read made, once its first bytes are in; never completes for a read that downloads nothing.</summary>
    public Task<FillProgress> Published => _published.Task;

    /// <summary>Gets a value indicating whether a download was handed over already.</summary>
    internal bool Used { get; private set; }

    /// <summary>
    /// What <paramref name="read"/>, made with this follower, serves: its whole lease when it ends first (a hit, a small
    /// or peer-served miss), else the download in progress and the read that ends it.
    /// </summary>
    public async Task<PeerGetServe> ServeAsync(Task<ObjectLease> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (!read.IsCompleted)
        {
            await Task.WhenAny(read, Published).ConfigureAwait(false);
        }

        if (read.IsCompleted || !Published.IsCompletedSuccessfully)
        {
            return PeerGetServe.Whole(await read.ConfigureAwait(false));
        }

        return PeerGetServe.Pipelined(Published.Result, read);
    }

    /// <summary>
    /// Makes <paramref name="read"/> with a new follower when <paramref name="follow"/> (a reader that streams the object
    /// on) and serves it as <see cref="ServeAsync(Task{ObjectLease})"/> does; without, the whole lease once read.
    /// </summary>
    public static async Task<PeerGetServe> ReadAndServeAsync(bool follow, Func<DownloadFollower?, Task<ObjectLease>> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (!follow)
        {
            return PeerGetServe.Whole(await read(null).ConfigureAwait(false));
        }

        var follower = new DownloadFollower();
        return await follower.ServeAsync(read(follower)).ConfigureAwait(false);
    }

    /// <summary>Hands over <paramref name="progress"/>, the read's first download.</summary>
    internal void Publish(FillProgress progress)
    {
        Used = true;
        _published.TrySetResult(progress);
    }
}
