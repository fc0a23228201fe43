namespace FaaSCache.Storage;

/// <summary>Forwards every call to an inner store; derive from it to observe or change one call.</summary>
public abstract class DelegatingBlobStore(IBlobStore inner) : IBlobStore
{
    /// <summary>Gets the inner store.</summary>
    protected IBlobStore Inner { get; } = inner;

    /// <inheritdoc />
    public virtual Uri AccountUri => Inner.AccountUri;

    /// <inheritdoc />
    public virtual Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
        => Inner.FetchAsync(key, ifNoneMatch, consume, cancellationToken);

    /// <inheritdoc />
    public virtual Task<FetchResult<T>> FetchRangeAsync<T>(string key, long offset, long length, string ifMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
        => Inner.FetchRangeAsync(key, offset, length, ifMatch, consume, cancellationToken);

    /// <inheritdoc />
    public virtual Task<BlobInfo?> GetInfoAsync(string key, CancellationToken cancellationToken = default) => Inner.GetInfoAsync(key, cancellationToken);

    /// <inheritdoc />
    public virtual Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default) => Inner.UploadAsync(key, content, writeId, cancellationToken);

    /// <inheritdoc />
    public virtual Task<string?> UploadIfAbsentAsync(string key, Stream content, CancellationToken cancellationToken = default) => Inner.UploadIfAbsentAsync(key, content, cancellationToken);

    /// <inheritdoc />
    public virtual Task<bool> TryCreateAsync(string key, ReadOnlyMemory<byte> content, CancellationToken cancellationToken = default) => Inner.TryCreateAsync(key, content, cancellationToken);

    /// <inheritdoc />
    public virtual Task<ConditionalUploadResult> UploadIfUnchangedAsync(string key, ReadOnlyMemory<byte> content, string? expectedETag, string? contentType = null, CancellationToken cancellationToken = default)
        => Inner.UploadIfUnchangedAsync(key, content, expectedETag, contentType, cancellationToken);

    /// <inheritdoc />
    public virtual Task<string?> GetVersionAsync(string key, CancellationToken cancellationToken = default) => Inner.GetVersionAsync(key, cancellationToken);

    /// <inheritdoc />
    public virtual IAsyncEnumerable<BlobListing> ListAsync(string container, string? prefix = null, CancellationToken cancellationToken = default)
        => Inner.ListAsync(container, prefix, cancellationToken);

    /// <inheritdoc />
    public virtual Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default) => Inner.DeleteAsync(key, cancellationToken);
}
