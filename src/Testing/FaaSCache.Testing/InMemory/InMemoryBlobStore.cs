using System.Runtime.CompilerServices;
using FaaSCache.Storage;

namespace FaaSCache.Testing;

/// <summary>
/// An <see cref="IBlobStore"/> in memory, for the core's unit tests: ETags that change on every write, conditional
/// fetches (a current <c>If-None-Match</c> answers 304 with no body), containers created by uploads, write ids,
/// conditional creates, listings in name order, and <see cref="Fault"/> to inject failures into any call. Bodies are
/// streamed in small reads, as a network would deliver them. Azurite-backed tests stay as integration tests.
/// </summary>
public sealed class InMemoryBlobStore : IBlobStore
{
    private readonly Lock _gate = new();
    private readonly Dictionary<string, Dictionary<string, Blob>> _containers = new(StringComparer.Ordinal);
    private long _etagClock = 0x1D0000000000000;

    /// <summary>Gets or sets a hook run before every call with the operation name (fetch, upload, create, version, list, delete) and key; throw from it to inject a fault.</summary>
    public Action<string, string>? Fault { get; set; }

    /// <inheritdoc />
    public Uri AccountUri { get; } = new("http://in-memory.blob.test/account");

    /// <summary>Gets how many fetches delivered a body.</summary>
    public int BodiesServed { get; private set; }

    /// <inheritdoc />
    public async Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("fetch", key);
        Blob blob = Find(key) ?? throw NotFound(key);
        if (ifNoneMatch is not null && ifNoneMatch == blob.ETag)
        {
            return new FetchResult<T>(FetchStatus.NotModified, ifNoneMatch, 0, default);
        }

        lock (_gate)
        {
            BodiesServed++;
        }

        await using var content = new TrickleStream(blob.Content);
        T value = await consume(blob.Content.Length, blob.ETag, content, cancellationToken).ConfigureAwait(false);
        return new FetchResult<T>(FetchStatus.Ok, blob.ETag, blob.Content.Length, value);
    }

    /// <inheritdoc />
    public async Task<FetchResult<T>> FetchRangeAsync<T>(string key, long offset, long length, string ifMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("range", key);
        Blob blob = Find(key) ?? throw NotFound(key);
        if (blob.ETag != ifMatch)
        {
            throw new BlobVersionChangedException($"Blob '{key}' is no longer version {ifMatch}.") { Key = key };
        }

        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(offset, (long)blob.Content.Length);
        int count = (int)Math.Min(length, blob.Content.Length - offset);
        lock (_gate)
        {
            RangesServed++;
        }

        await using var content = new TrickleStream(blob.Content, (int)offset, count);
        T value = await consume(count, blob.ETag, content, cancellationToken).ConfigureAwait(false);
        return new FetchResult<T>(FetchStatus.Ok, blob.ETag, count, value);
    }

    /// <inheritdoc />
    public Task<BlobInfo?> GetInfoAsync(string key, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("info", key);
        return Task.FromResult(Find(key) is { } blob ? new BlobInfo(blob.ETag, blob.Content.Length, ContentMd5(blob.Content), blob.XxHash3) : (BlobInfo?)null);
    }

#pragma warning disable CA5351 // Content-MD5 as storage computes it for a single-shot upload: integrity, not security.
    private static byte[] ContentMd5(byte[] content) => System.Security.Cryptography.MD5.HashData(content);
#pragma warning restore CA5351

    /// <summary>Gets how many ranged fetches delivered a body.</summary>
    public int RangesServed { get; private set; }

    /// <inheritdoc />
    public async Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("upload", key);
        using var buffer = new MemoryStream();
        await content.CopyToAsync(buffer, cancellationToken).ConfigureAwait(false);
        return Put(key, buffer.ToArray(), writeId, recordChecksum: true);
    }

    /// <inheritdoc />
    public async Task<string?> UploadIfAbsentAsync(string key, Stream content, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("upload", key);
        using var buffer = new MemoryStream();
        await content.CopyToAsync(buffer, cancellationToken).ConfigureAwait(false);
        byte[] bytes = buffer.ToArray();
        return PutIfAbsent(key, bytes, BlobChecksum.Of(bytes));
    }

    /// <inheritdoc />
    public Task<bool> TryCreateAsync(string key, ReadOnlyMemory<byte> content, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("create", key);
        return Task.FromResult(PutIfAbsent(key, content.ToArray(), checksum: null) is not null);
    }

    /// <inheritdoc />
    /// <remarks>As storage does: a stale or absent version fails <c>If-Match</c> (412, 404); an existing blob fails a create (409).</remarks>
    public Task<ConditionalUploadResult> UploadIfUnchangedAsync(string key, ReadOnlyMemory<byte> content, string? expectedETag, string? contentType = null, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("upload", key);
        if (expectedETag is null)
        {
            return Task.FromResult(PutIfAbsent(key, content.ToArray(), checksum: null) is { } created
                ? ConditionalUploadResult.WrittenAs(created)
                : ConditionalUploadResult.PreconditionFailed);
        }

        BlobKey parsed = BlobKey.Parse(key);
        lock (_gate)
        {
            if (ContainerLocked(parsed.Container, create: false) is not { } container
                || !container.TryGetValue(parsed.BlobName, out Blob? blob) || blob.ETag != expectedETag)
            {
                return Task.FromResult(ConditionalUploadResult.PreconditionFailed);
            }

            string etag = NextETagLocked();
            container[parsed.BlobName] = new Blob(content.ToArray(), etag, null, null);
            return Task.FromResult(ConditionalUploadResult.WrittenAs(etag));
        }
    }

    /// <summary>Stores <paramref name="bytes"/> as <paramref name="key"/> unless it exists; its new ETag, or null.</summary>
    private string? PutIfAbsent(string key, byte[] bytes, ulong? checksum)
    {
        BlobKey parsed = BlobKey.Parse(key);
        lock (_gate)
        {
            Dictionary<string, Blob> container = ContainerLocked(parsed.Container, create: true)!;
            if (container.ContainsKey(parsed.BlobName))
            {
                return null;
            }

            string etag = NextETagLocked();
            container[parsed.BlobName] = new Blob(bytes, etag, null, checksum);
            return etag;
        }
    }

    /// <inheritdoc />
    public Task<string?> GetVersionAsync(string key, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("version", key);
        return Task.FromResult(Find(key)?.ETag);
    }

    /// <inheritdoc />
    public async IAsyncEnumerable<BlobListing> ListAsync(string container, string? prefix = null, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("list", container);
        List<BlobListing> listing;
        lock (_gate)
        {
            listing = ContainerLocked(container, create: false) is { } blobs
                ? [.. blobs.Where(b => prefix is null || b.Key.StartsWith(prefix, StringComparison.Ordinal))
                    .OrderBy(b => b.Key, StringComparer.Ordinal)
                    .Select(b => new BlobListing($"{container}/{b.Key}", b.Value.ETag, b.Value.Content.Length, b.Value.WriteId))]
                : [];
        }

        foreach (BlobListing blob in listing)
        {
            cancellationToken.ThrowIfCancellationRequested();
            await Task.Yield();
            yield return blob;
        }
    }

    /// <inheritdoc />
    public Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default)
    {
        Fault?.Invoke("delete", key);
        BlobKey parsed = BlobKey.Parse(key);
        lock (_gate)
        {
            return Task.FromResult(ContainerLocked(parsed.Container, create: false)?.Remove(parsed.BlobName) ?? false);
        }
    }

    /// <summary>
    /// Writes a blob as another client would (behind the cache's back); returns its new ETag. With
    /// <paramref name="recordChecksum"/> the blob carries the whole-object XxHash3 a cachelet's upload records.
    /// </summary>
    public string Put(string key, byte[] content, string? writeId = null, bool recordChecksum = false)
    {
        BlobKey parsed = BlobKey.Parse(key);
        lock (_gate)
        {
            string etag = NextETagLocked();
            ContainerLocked(parsed.Container, create: true)![parsed.BlobName] = new Blob(content, etag, writeId, recordChecksum ? BlobChecksum.Of(content) : null);
            return etag;
        }
    }

    /// <summary>Creates an empty container (an upload creates its container too).</summary>
    public void CreateContainer(string name)
    {
        lock (_gate)
        {
            ContainerLocked(name, create: true);
        }
    }

    /// <summary>The content of a blob, or null when it does not exist.</summary>
    public byte[]? Get(string key) => Find(key)?.Content;

    private Blob? Find(string key)
    {
        BlobKey parsed = BlobKey.Parse(key);
        lock (_gate)
        {
            return ContainerLocked(parsed.Container, create: false)?.GetValueOrDefault(parsed.BlobName);
        }
    }

    private Dictionary<string, Blob>? ContainerLocked(string name, bool create)
    {
        if (!_containers.TryGetValue(name, out Dictionary<string, Blob>? container) && create)
        {
            container = new Dictionary<string, Blob>(StringComparer.Ordinal);
            _containers[name] = container;
        }

        return container;
    }

    private BlobNotFoundException NotFound(string key)
    {
        BlobKey parsed = BlobKey.Parse(key);
        bool container;
        lock (_gate)
        {
            container = _containers.ContainsKey(parsed.Container);
        }

        string what = container ? "the blob does not exist" : "its container does not exist";
        return new BlobNotFoundException($"Blob '{key}' was not found in storage account {AccountUri} ({what}).") { Key = key };
    }

    // Storage's ETags look like "0x8DC...": quoted, hexadecimal, different on every write.
    private string NextETagLocked() => string.Create(CultureInfo.InvariantCulture, $"\"0x{++_etagClock:X}\"");

    private sealed record Blob(byte[] Content, string ETag, string? WriteId, ulong? XxHash3);

    /// <summary>A read-only stream that hands out at most 64 KiB per read, as a network stream does.</summary>
    private sealed class TrickleStream(byte[] content, int offset, int count) : MemoryStream(content, offset, count, writable: false)
    {
        public TrickleStream(byte[] content)
            : this(content, 0, content.Length)
        {
        }

        private const int MaxRead = 64 * 1024;

        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, MaxRead));

        public override int Read(Span<byte> buffer) => base.Read(buffer[..Math.Min(buffer.Length, MaxRead)]);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
            => base.ReadAsync(buffer[..Math.Min(buffer.Length, MaxRead)], cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
            => base.ReadAsync(buffer, offset, Math.Min(count, MaxRead), cancellationToken);
    }
}
