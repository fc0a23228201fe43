namespace FaaSCache.Caching;

/// <summary>
/// What the owner serves a peer's get with: a lease on a whole object (a hit, or a miss already downloaded), or a
/// download in progress that the peer service streams as it fills (<see cref="Progress"/>), whose lease
/// <see cref="Completion"/> yields once the object is whole and admitted.
/// </summary>
public sealed class PeerGetServe
{
    private PeerGetServe(ObjectLease? lease, bool hit, FillProgress? progress, Task<ObjectLease>? completion)
    {
        Lease = lease;
        Hit = hit;
        Progress = progress;
        Completion = completion;
    }

    /// <summary>Gets the lease on the whole object, or null while it is still being downloaded.</summary>
    public ObjectLease? Lease { get; }

    /// <summary>Gets a value indicating whether the owner had the object cached (a remote hit for the caller).</summary>
    public bool Hit { get; }

    /// <summary>Gets the download in progress, when the object is served as it arrives.</summary>
    public FillProgress? Progress { get; }

    /// <summary>Gets the read that ends the download: the lease on the whole, admitted object (faults if the download does).</summary>
    public Task<ObjectLease>? Completion { get; }

    /// <summary>Serves a whole object.</summary>
    /// <param name="lease">The lease (the caller disposes it).</param>
    /// <param name="hit">Whether it was cached.</param>
    /// <returns>The serve.</returns>
    public static PeerGetServe Whole(ObjectLease lease, bool hit) => new(lease, hit, null, null);

    /// <summary>Serves the whole object a read leased: a hit when the read was a local hit.</summary>
    /// <param name="lease">The lease (the caller disposes it).</param>
    /// <returns>The serve.</returns>
    public static PeerGetServe Whole(ObjectLease lease) => Whole(lease, lease.Source == ReadSource.LocalHit);

    /// <summary>Serves a download as it fills.</summary>
    /// <param name="progress">The fill.</param>
    /// <param name="completion">The read that ends it.</param>
    /// <returns>The serve.</returns>
    public static PeerGetServe Pipelined(FillProgress progress, Task<ObjectLease> completion) => new(null, hit: false, progress, completion);
}
