namespace FaaSCache.Storage;

/// <summary>Outcome of a fetch.</summary>
public enum FetchStatus
{
    /// <summary>The body was delivered to the consumer.</summary>
    Ok,
    /// <summary>The version given in If-None-Match is current (304): nothing was downloaded.</summary>
    NotModified,
}

/// <summary>What a fetch produced.</summary>
/// <typeparam name="T">The consumer's result.</typeparam>
public readonly record struct FetchResult<T>(FetchStatus Status, string? ETag, long Length, T? Value);

/// <summary>Receives a blob's body as it streams in; called again on a retry, so it must start afresh each time.</summary>
/// <typeparam name="T">What the consumer makes of the body.</typeparam>
/// <param name="length">The content length.</param>
/// <param name="etag">The version being delivered.</param>
/// <param name="content">The body stream.</param>
/// <param name="cancellationToken">Cancellation.</param>
public delegate Task<T> BlobBodyConsumer<T>(long length, string etag, Stream content, CancellationToken cancellationToken);

/// <summary>One blob of a listing.</summary>
/// <param name="Key">The key, <c>container/blob</c>.</param>
/// <param name="ETag">The version.</param>
/// <param name="Length">The size in bytes.</param>
/// <param name="WriteId">The write id a cachelet tagged the blob with when it persisted a write (null for other writers).</param>
public readonly record struct BlobListing(string Key, string ETag, long Length, string? WriteId = null);

/// <summary>A blob's properties: its version, its length and the whole-object checksums it carries, if any.</summary>
/// <param name="ETag">The version.</param>
/// <param name="Length">The size in bytes.</param>
/// <param name="ContentMd5">The Content-MD5 property (set by single-shot uploads; absent on blobs put as blocks).</param>
/// <param name="XxHash3">The XxHash3 (64-bit) of the content that a cachelet's upload recorded in the blob's metadata.</param>
public readonly record struct BlobInfo(string ETag, long Length, byte[]? ContentMd5, ulong? XxHash3);

/// <summary>A narrow blob storage API: conditional fetch, ranged fetch, upload, version query, delete.</summary>
public interface IBlobStore
{
    /// <summary>The metadata name of a write id (<see cref="UploadAsync(string, Stream, string?, CancellationToken)"/>).</summary>
    const string WriteIdMetadata = "faascachewrite";

    /// <summary>
    /// The metadata name of the whole-object XxHash3 (16 hex digits) an upload records, so that an object assembled from
    /// ranges (§4, bandwidth scaling) can be checked as a whole at memory speed.
    /// </summary>
    const string XxHash3Metadata = "faascachexxh3";

    /// <summary>Gets the account endpoint, for messages and banners.</summary>
    Uri AccountUri { get; }

    /// <summary>
    /// One conditional GET: with <paramref name="ifNoneMatch"/> a current version answers 304 (no body);
    /// otherwise the body streams into <paramref name="consume"/>. Throws <see cref="BlobNotFoundException"/>.
    /// </summary>
    Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>
    /// One ranged GET of <paramref name="length"/> bytes from <paramref name="offset"/> of the version
    /// <paramref name="ifMatch"/> (<c>If-Match</c>): the bytes of every range of one load come from one version.
    /// Throws <see cref="BlobNotFoundException"/>, and <see cref="BlobVersionChangedException"/> when the blob is no
    /// longer that version.
    /// </summary>
    Task<FetchResult<T>> FetchRangeAsync<T>(string key, long offset, long length, string ifMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>The blob's version, length and recorded checksums; null when it does not exist.</summary>
    Task<BlobInfo?> GetInfoAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>
    /// Uploads <paramref name="content"/> (seekable, replayed on retry); creates the container if needed; returns the new
    /// ETag. A non-null <paramref name="writeId"/> tags the blob (metadata, returned by listings): a cachelet tags an
    /// asynchronous write with the version it announced, so that whoever lists the blob later can tell it is that write.
    /// </summary>
    Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Uploads <paramref name="content"/> as <see cref="UploadAsync(string, Stream, string?, CancellationToken)"/> does
    /// (checksum recorded, container created if needed), only if no blob of that name exists (<c>If-None-Match: *</c>):
    /// storage decides, atomically. Returns the new ETag, or null when the blob already exists (nothing written).
    /// </summary>
    Task<string?> UploadIfAbsentAsync(string key, Stream content, CancellationToken cancellationToken = default);

    /// <summary>Creates the blob only if it does not exist (<c>If-None-Match: *</c>); false when it already does.</summary>
    Task<bool> TryCreateAsync(string key, ReadOnlyMemory<byte> content, CancellationToken cancellationToken = default);

    /// <summary>Returns the current ETag, or null when the blob does not exist.</summary>
    Task<string?> GetVersionAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>Lists the blobs of <paramref name="container"/> whose names start with <paramref name="prefix"/>, with their versions; empty when the container does not exist.</summary>
    IAsyncEnumerable<BlobListing> ListAsync(string container, string? prefix = null, CancellationToken cancellationToken = default);

    /// <summary>Deletes the blob; false when it did not exist.</summary>
    Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default);
}

/// <summary>Shorthands over <see cref="IBlobStore"/>.</summary>
public static class BlobStoreExtensions
{
    /// <summary>Uploads <paramref name="content"/> untagged; returns the new ETag.</summary>
    public static Task<string> UploadAsync(this IBlobStore store, string key, Stream content, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        return store.UploadAsync(key, content, null, cancellationToken);
    }
}
