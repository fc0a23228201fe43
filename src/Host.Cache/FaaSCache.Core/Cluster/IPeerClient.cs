namespace FaaSCache.Cluster;

/// <summary>Receives an object's bytes from a peer as they stream in (verified before the stream ends cleanly).</summary>
/// <typeparam name="T">What the consumer makes of the body.</typeparam>
/// <param name="length">The content length.</param>
/// <param name="version">The version being delivered.</param>
/// <param name="content">The body.</param>
/// <param name="cancellationToken">Cancellation.</param>
public delegate Task<T> PeerBodyConsumer<T>(long length, string version, Stream content, CancellationToken cancellationToken);

/// <summary>What a peer delivered.</summary>
/// <typeparam name="T">The consumer's result.</typeparam>
/// <param name="Version">The version.</param>
/// <param name="Length">The length.</param>
/// <param name="OwnerHit">True when the peer had it cached (remote hit), false when it fetched it from storage (remote miss).</param>
/// <param name="Value">The consumer's result.</param>
public readonly record struct PeerFetchResult<T>(string Version, long Length, bool OwnerHit, T Value);

/// <summary>
/// Cachelet-to-cachelet calls (§3.2): streamed get and put, version query, invalidate. Implemented over
/// gRPC by the host; the core only sees this interface.
/// </summary>
public interface IPeerClient
{
    /// <summary>
    /// Gets <paramref name="key"/> from <paramref name="memberId"/>'s cache. With <paramref name="fetchIfMissing"/>
    /// the peer (the owner) fetches it from storage when it does not have it; without, null means it does not have it.
    /// Throws <see cref="PeerUnavailableException"/> when the peer cannot be reached or the transfer fails.
    /// </summary>
    Task<PeerFetchResult<T>?> GetAsync<T>(string memberId, string key, bool fetchIfMissing, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>
    /// Writes <paramref name="key"/> through its owner <paramref name="memberId"/>; returns the version the owner now holds.
    /// With <paramref name="createOnly"/> the owner writes it only if the blob does not exist, and otherwise answers so:
    /// <see cref="FaaSCache.Storage.BlobAlreadyExistsException"/>.
    /// </summary>
    Task<PeerWriteResult> PutAsync(string memberId, string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default);

    /// <summary>The version <paramref name="memberId"/> holds for <paramref name="key"/> (as owner: its copy's, else storage's); null if none.</summary>
    Task<string?> GetVersionAsync(string memberId, string key, CancellationToken cancellationToken = default);

    /// <summary>
    /// §4, bandwidth scaling: has <paramref name="memberId"/> download <paramref name="length"/> bytes of version
    /// <paramref name="version"/> of <paramref name="key"/> from <paramref name="offset"/> from storage and stream them
    /// here as they arrive; the consumer receives exactly those bytes (checked against the sender's checksum before the
    /// call returns). Throws <see cref="PeerUnavailableException"/> when the member cannot help (the requester then
    /// fetches the range itself), <see cref="FaaSCache.Storage.BlobNotFoundException"/> when the blob is gone.
    /// </summary>
    Task<T> LoadRangeAsync<T>(string memberId, string key, string version, long offset, long length, PeerBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>Receives <paramref name="length"/> bytes from <paramref name="memberId"/>'s memory, to measure the rate between the two (BW_Inst).</summary>
    Task<PeerProbeResult> ProbeAsync(string memberId, long length, CancellationToken cancellationToken = default);

    /// <summary>Tells <paramref name="memberId"/> that versions of <paramref name="key"/> other than <paramref name="version"/> are stale.</summary>
    Task InvalidateAsync(string memberId, string key, string version, CancellationToken cancellationToken = default);
}

/// <summary>The owner's answer to a put.</summary>
/// <param name="Version">The version now held (the storage ETag when persisted).</param>
/// <param name="Persisted">True when storage had it before the owner answered.</param>
public readonly record struct PeerWriteResult(string Version, bool Persisted);

/// <summary>A rate probe's measurements.</summary>
/// <param name="Bytes">The bytes received.</param>
/// <param name="FirstByte">From the call to the first byte.</param>
/// <param name="Transfer">From the first byte to the last.</param>
public readonly record struct PeerProbeResult(long Bytes, TimeSpan FirstByte, TimeSpan Transfer);
