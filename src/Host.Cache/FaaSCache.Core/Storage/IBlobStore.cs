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

/// <summary>Outcome of a conditional upload.</summary>
public enum ConditionalUploadStatus
{
    /// <summary>The condition held: the content was written.</summary>
    Written,

    /// <summary>
    /// The condition did not hold (storage's 412, or 409 for a create-only upload): the blob is another version, is gone,
    /// or already exists. Nothing was written.
    /// </summary>
    PreconditionFailed,
}

/// <summary>What a conditional upload did.</summary>
/// <param name="Status">Whether the content was written.</param>
/// <param name="ETag">The new version when written; null when the precondition failed.</param>
public readonly record struct ConditionalUploadResult(ConditionalUploadStatus Status, string? ETag)
{
    /// <summary>Gets the result of an upload whose condition did not hold.</summary>
    public static ConditionalUploadResult PreconditionFailed => new(ConditionalUploadStatus.PreconditionFailed, null);

    /// <summary>Gets a value indicating whether the content was written.</summary>
    public bool Written => Status == ConditionalUploadStatus.Written;

    /// <summary>The result of an upload that wrote version <paramref name="etag"/>.</summary>
    public static ConditionalUploadResult WrittenAs(string etag) => new(ConditionalUploadStatus.Written, etag);
}

/// <summary>A narrow blob storage API: conditional fetch, ranged fetch, upload, conditional upload, version query, delete.</summary>
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

    /// <summary>
    /// Compare-and-swap: uploads <paramref name="content"/> only if the blob is still the version
    /// <paramref name="expectedETag"/> (<c>If-Match</c>), or, when <paramref name="expectedETag"/> is null, only if no blob
    /// of that name exists (<c>If-None-Match: *</c>; the container is created if needed). Storage decides, atomically; a
    /// failed condition is a <see cref="ConditionalUploadStatus.PreconditionFailed"/> result, not an exception, whatever
    /// the store. Records no checksum or write id: meant for small documents that their writers read whole.
    /// </summary>
    /// <param name="key">The blob, <c>container/blob</c>.</param>
    /// <param name="content">The whole new content.</param>
    /// <param name="expectedETag">The version read before the change; null when the blob did not exist.</param>
    /// <param name="contentType">The Content-Type to store (storage's default when null).</param>
    /// <param name="cancellationToken">Cancellation.</param>
    Task<ConditionalUploadResult> UploadIfUnchangedAsync(string key, ReadOnlyMemory<byte> content, string? expectedETag, string? contentType = null, CancellationToken cancellationToken = default);

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

    /// <summary>
    /// Reads a small blob whole with its version, as <see cref="IBlobStore.FetchAsync"/> does (a current
    /// <paramref name="ifNoneMatch"/> answers <see cref="FetchStatus.NotModified"/> with no body). Throws
    /// <see cref="BlobNotFoundException"/>.
    /// </summary>
    public static Task<FetchResult<byte[]>> FetchBytesAsync(this IBlobStore store, string key, string? ifNoneMatch = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        return store.FetchAsync(key, ifNoneMatch, static async (length, _, content, token) =>
        {
            using var buffer = new MemoryStream(checked((int)length));
            await content.CopyToAsync(buffer, token).ConfigureAwait(false);
            return buffer.ToArray();
        }, cancellationToken);
    }
}
