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
public readonly record struct BlobListing(string Key, string ETag, long Length);

/// <summary>A narrow blob storage API: conditional fetch, upload, version query, delete.</summary>
public interface IBlobStore
{
    /// <summary>Gets the account endpoint, for messages and banners.</summary>
    Uri AccountUri { get; }

    /// <summary>
    /// One conditional GET: with <paramref name="ifNoneMatch"/> a current version answers 304 (no body);
    /// otherwise the body streams into <paramref name="consume"/>. Throws <see cref="BlobNotFoundException"/>.
    /// </summary>
    Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default);

    /// <summary>Uploads <paramref name="content"/> (seekable, replayed on retry); creates the container if needed; returns the new ETag.</summary>
    Task<string> UploadAsync(string key, Stream content, CancellationToken cancellationToken = default);

    /// <summary>Returns the current ETag, or null when the blob does not exist.</summary>
    Task<string?> GetVersionAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>Lists the blobs of <paramref name="container"/> whose names start with <paramref name="prefix"/>, with their versions; empty when the container does not exist.</summary>
    IAsyncEnumerable<BlobListing> ListAsync(string container, string? prefix = null, CancellationToken cancellationToken = default);

    /// <summary>Deletes the blob; false when it did not exist.</summary>
    Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default);
}
