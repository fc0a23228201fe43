using System.Xml;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Put Blob, Put Block, Put Block List and Delete Blob.</summary>
public sealed partial class BlobEndpointHandler
{
    /// <summary>The largest single Put Blob or Put Block body taken in memory; larger ones go to storage as sent.</summary>
    public const long MaxBufferedBody = 512L * 1024 * 1024;

    /// <summary>Storage's limit on a Put Blob body (5,000 MiB since version 2019-12-12); larger ones get its 413.</summary>
    public const long MaxPutBlobBytes = 5000L * 1024 * 1024;

    /// <summary>Storage's limit on a Put Block body (4,000 MiB since version 2019-12-12).</summary>
    public const long MaxPutBlockBytes = 4000L * 1024 * 1024;

    private const long MaxBlockListBytes = 8L * 1024 * 1024;

    private static readonly string[] KeptHeaderPrefixes = ["x-ms-meta-", "x-ms-tags", "x-ms-access-tier", "x-ms-immutability", "x-ms-legal-hold", "x-ms-encryption-scope", "x-ms-blob-content-encoding", "x-ms-blob-content-language", "x-ms-blob-content-disposition", "x-ms-blob-cache-control"];

    private async Task PutBlobAsync(HttpContext context, BlobAddress address)
    {
        HttpRequest request = context.Request;
        if (request.ContentLength > MaxPutBlobBytes)
        {
            await TooLargeAsync(context, request.ContentLength.Value, MaxPutBlobBytes).ConfigureAwait(false);
            return;
        }

        if (!CacheKeepsWhatIsWritten(request) || request.ContentLength > MaxBufferedBody)
        {
            await ForwardWriteAwareAsync(context, address, writes: true, resign: true).ConfigureAwait(false);
            return;
        }

        byte[]? body = await ReadBodyAsync(context, MaxBufferedBody).ConfigureAwait(false);
        if (body is null)
        {
            return;
        }

        byte[] md5 = BlobHeaders.Md5(body);
        // If both are sent, storage checks x-ms-blob-content-md5 and ignores Content-MD5.
        string claimed = request.Headers["x-ms-blob-content-md5"].ToString() is { Length: > 0 } blobMd5 ? blobMd5 : request.Headers.ContentMD5.ToString();
        if (claimed.Length > 0 && !string.Equals(claimed, Convert.ToBase64String(md5), StringComparison.Ordinal))
        {
            await StorageErrors.WriteAsync(context, 400, "Md5Mismatch", "The MD5 value specified in the request did not match with the MD5 value calculated by the server.",
                [new("UserSpecifiedMd5", claimed), new("ServerCalculatedMd5", Convert.ToBase64String(md5))]).ConfigureAwait(false);
            return;
        }

        await WriteThroughCacheAsync(context, address, body, md5, md5).ConfigureAwait(false);
    }

    private async Task PutBlockAsync(HttpContext context, BlobAddress address)
    {
        string id = address.Query("blockid") ?? string.Empty;
        if (!BlockListFormat.IsValidBlockId(id, out string why))
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidQueryParameterValue", $"Value for one of the query parameters specified in the request URI is invalid: blockid '{id}' {why}.",
                [new("QueryParameterName", "blockid"), new("QueryParameterValue", id)]).ConfigureAwait(false);
            return;
        }

        if (context.Request.ContentLength > MaxPutBlockBytes)
        {
            await TooLargeAsync(context, context.Request.ContentLength.Value, MaxPutBlockBytes).ConfigureAwait(false);
            return;
        }

        if (context.Request.ContentLength > MaxBufferedBody)
        {
            // Too large to stage here: staged in storage as sent; a list naming it is then resolved by storage.
            await ForwardWriteAwareAsync(context, address, writes: false, resign: true).ConfigureAwait(false);
            return;
        }

        byte[]? body = await ReadBodyAsync(context, MaxBufferedBody).ConfigureAwait(false);
        if (body is null)
        {
            return;
        }

        string claimed = context.Request.Headers.ContentMD5.ToString();
        if (claimed.Length > 0 && !string.Equals(claimed, Convert.ToBase64String(BlobHeaders.Md5(body)), StringComparison.Ordinal))
        {
            await StorageErrors.WriteAsync(context, 400, "Md5Mismatch", "The MD5 value specified in the request did not match with the MD5 value calculated by the server.",
                [new("UserSpecifiedMd5", claimed), new("ServerCalculatedMd5", Convert.ToBase64String(BlobHeaders.Md5(body)))]).ConfigureAwait(false);
            return;
        }

        if (!_blocks.TryStage(address.Key, id, body))
        {
            await StorageErrors.WriteAsync(context, 503, "ServerBusy", $"The endpoint holds {_blocks.Bytes} bytes of uncommitted blocks, its limit; retry after a commit.").ConfigureAwait(false);
            return;
        }

        BlobHeaders.StampCommon(context);
        context.Response.StatusCode = 201;
        context.Response.Headers["x-ms-request-server-encrypted"] = "true";
        if (claimed.Length > 0)
        {
            context.Response.Headers.ContentMD5 = claimed;
        }

        context.Response.ContentLength = 0;
    }

    private async Task PutBlockListAsync(HttpContext context, BlobAddress address)
    {
        byte[]? xml = await ReadBodyAsync(context, MaxBlockListBytes).ConfigureAwait(false);
        if (xml is null)
        {
            return;
        }

        List<BlockListEntry> entries;
        try
        {
            entries = BlockListFormat.Parse(xml);
        }
        catch (XmlException e)
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidXmlDocument", $"XML specified is not syntactically valid: {e.Message}").ConfigureAwait(false);
            return;
        }

        (IReadOnlyList<ResolvedBlock>? blocks, string? committedVersion) = _blocks.Resolve(address.Key, entries);
        byte[]? content = blocks is null ? null : await AssembleAsync(address, blocks, committedVersion, context.RequestAborted).ConfigureAwait(false);
        if (blocks is null || content is null)
        {
            // A block committed in storage (put there by another client, or before this host ran): storage resolves the list.
            await ForwardBlockListAsync(context, address, xml, entries).ConfigureAwait(false);
            return;
        }

        byte[] listMd5 = BlobHeaders.Md5(xml);
        if (CacheKeepsWhatIsWritten(context.Request))
        {
            await WriteThroughCacheAsync(context, address, content, contentMd5: null, answerMd5: listMd5).ConfigureAwait(false);
        }
        else
        {
            await CommitToStorageAsync(context, address, content, listMd5).ConfigureAwait(false);
        }

        if (context.Response.StatusCode == 201)
        {
            _blocks.Clear(address.Key);
            _blocks.RememberCommitted(address.Key, context.Response.Headers.ETag.ToString(), entries, blocks);
        }
    }

    /// <summary>
    /// The blob a resolved list makes: staged blocks as they are, committed ones cut from the version committed here
    /// (read through the cache); null when the blob is no longer that version (storage then resolves the list).
    /// </summary>
    private async Task<byte[]?> AssembleAsync(BlobAddress address, IReadOnlyList<ResolvedBlock> blocks, string? committedVersion, CancellationToken cancellationToken)
    {
        ObjectLease? committed = null;
        try
        {
            committed = committedVersion is null ? null : await _cache.ReadAsync(address.Key, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is BlobNotFoundException or BlobVersionChangedException)
        {
            return null;
        }

        using (committed)
        {
            if (committed is not null && !string.Equals(committed.Version.Trim('"'), committedVersion!.Trim('"'), StringComparison.Ordinal))
            {
                return null;
            }

            byte[] content = GC.AllocateUninitializedArray<byte>(checked((int)blocks.Sum(b => b.Length)));
            int at = 0;
            foreach (ResolvedBlock block in blocks)
            {
                ReadOnlySpan<byte> bytes = block.Staged ?? committed!.Memory.Span.Slice(checked((int)block.Offset), checked((int)block.Length));
                bytes.CopyTo(content.AsSpan(at));
                at += bytes.Length;
            }

            return content;
        }
    }

    /// <summary>
    /// A list this host cannot resolve goes to storage unchanged, as storage would have had it: the blocks put here that
    /// it names are put to storage first; once storage commits it, the cached copy is dropped.
    /// </summary>
    private async Task ForwardBlockListAsync(HttpContext context, BlobAddress address, byte[] xml, IReadOnlyList<BlockListEntry> entries)
    {
        BlockBlobClient storage = _properties.Blob(address.Key).GetParentBlobContainerClient().GetBlockBlobClient(address.Blob);
        try
        {
            foreach ((string id, byte[] data) in _blocks.StagedNamed(address.Key, entries))
            {
                using var block = new MemoryStream(data, writable: false);
                await storage.StageBlockAsync(id, block, cancellationToken: context.RequestAborted).ConfigureAwait(false);
            }
        }
        catch (RequestFailedException e)
        {
            await StorageErrors.WriteAsync(context, e.Status, e.ErrorCode ?? "InternalError", e.Message).ConfigureAwait(false);
            return;
        }

        // The body was read to parse it: the same bytes go on.
        context.Request.Body = new MemoryStream(xml, writable: false);
        await ForwardWriteAwareAsync(context, address, writes: true, resign: true).ConfigureAwait(false);
        if (context.Response.StatusCode is >= 200 and < 300)
        {
            _blocks.Clear(address.Key);
        }
    }

    private static Task TooLargeAsync(HttpContext context, long length, long limit)
        => StorageErrors.WriteAsync(context, 413, "RequestBodyTooLarge",
            $"The request body is too large ({length} bytes) and exceeds the maximum permissible limit ({limit} bytes).", [new("MaxLimit", limit.ToString(CultureInfo.InvariantCulture))]);

    private Task DeleteAsync(HttpContext context, BlobAddress address)
        => ForwardWriteAwareAsync(context, address, writes: true, resign: true);

    /// <summary>
    /// The write path: owner, persistence under the preset, blob triggers once. A create-only write (<c>If-None-Match: *</c>)
    /// is decided by the cache across instances (<see cref="IObjectCache.CreateAsync"/>): storage's 409 when the blob exists.
    /// </summary>
    private async Task WriteThroughCacheAsync(HttpContext context, BlobAddress address, byte[] content, byte[]? contentMd5, byte[] answerMd5)
    {
        // A SAS granting c without w may create the blob, not replace it: storage's 403 when it exists (decided
        // atomically with the write, across instances, as an If-None-Match: * write is).
        bool sasCreateOnly = context.Items[CreateOnlyItem] is true;
        bool createOnly = sasCreateOnly || context.Request.Headers.IfNoneMatch.ToString().Trim() == "*";
        WriteReceipt receipt;
        try
        {
            receipt = createOnly
                ? await _cache.CreateAsync(address.Key, content, context.RequestAborted).ConfigureAwait(false)
                : await _cache.WriteAsync(address.Key, content, context.RequestAborted).ConfigureAwait(false);
        }
        catch (BlobAlreadyExistsException) when (sasCreateOnly)
        {
            await StorageErrors.WriteAsync(context, 403, "AuthorizationPermissionMismatch",
                "This request is not authorized to perform this operation using this permission: the blob exists, and replacing it needs w (the SAS grants c, which creates new blobs only).").ConfigureAwait(false);
            return;
        }
        catch (BlobAlreadyExistsException)
        {
            await StorageErrors.WriteAsync(context, 409, "BlobAlreadyExists", "The specified blob already exists.").ConfigureAwait(false);
            return;
        }

        _properties.Forget(address.Key);
        BlobHeaders.StampCommon(context);
        HttpResponse response = context.Response;
        response.StatusCode = 201;
        response.Headers.ETag = BlobHeaders.Quote(receipt.Version);
        response.Headers.LastModified = DateTimeOffset.UtcNow.ToString("R", CultureInfo.InvariantCulture);
        response.Headers.ContentMD5 = Convert.ToBase64String(contentMd5 ?? answerMd5);
        response.Headers["x-ms-request-server-encrypted"] = "true";
        response.ContentLength = 0;
    }

    /// <summary>A block list carrying what the cache does not keep (metadata, content headers, conditions) commits in storage itself.</summary>
    private async Task CommitToStorageAsync(HttpContext context, BlobAddress address, byte[] content, byte[] listMd5)
    {
        IHeaderDictionary h = context.Request.Headers;
        var options = new BlobUploadOptions
        {
            HttpHeaders = new BlobHttpHeaders
            {
                ContentType = NullIfEmpty(h["x-ms-blob-content-type"]),
                ContentEncoding = NullIfEmpty(h["x-ms-blob-content-encoding"]),
                ContentLanguage = NullIfEmpty(h["x-ms-blob-content-language"]),
                ContentDisposition = NullIfEmpty(h["x-ms-blob-content-disposition"]),
                CacheControl = NullIfEmpty(h["x-ms-blob-cache-control"]),
                ContentHash = NullIfEmpty(h["x-ms-blob-content-md5"]) is { } md5 ? Convert.FromBase64String(md5) : null,
            },
            Metadata = h.Where(p => p.Key.StartsWith("x-ms-meta-", StringComparison.OrdinalIgnoreCase)).ToDictionary(p => p.Key["x-ms-meta-".Length..], p => p.Value.ToString(), StringComparer.Ordinal),
            Conditions = new BlobRequestConditions
            {
                IfMatch = NullIfEmpty(h.IfMatch) is { } ifMatch ? new ETag(ifMatch) : null,
                IfNoneMatch = NullIfEmpty(h.IfNoneMatch) is { } ifNoneMatch ? new ETag(ifNoneMatch) : null,
                IfModifiedSince = DateTimeOffset.TryParse(h.IfModifiedSince.ToString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out DateTimeOffset ims) ? ims : null,
                IfUnmodifiedSince = DateTimeOffset.TryParse(h.IfUnmodifiedSince.ToString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out DateTimeOffset ius) ? ius : null,
            },
            AccessTier = NullIfEmpty(h["x-ms-access-tier"]) is { } tier ? new AccessTier(tier) : null,
        };
        await _cache.FlushAsync(context.RequestAborted).ConfigureAwait(false);
        Response<BlobContentInfo> result;
        try
        {
            result = await _properties.Blob(address.Key).UploadAsync(new BinaryData(content), options, context.RequestAborted).ConfigureAwait(false);
        }
        catch (RequestFailedException e)
        {
            await StorageErrors.WriteAsync(context, e.Status, e.ErrorCode ?? "InternalError", e.Message).ConfigureAwait(false);
            return;
        }

        await StorageTookWriteAsync(address, result.Value.ETag.ToString()).ConfigureAwait(false);
        BlobHeaders.StampCommon(context);
        context.Response.StatusCode = 201;
        context.Response.Headers.ETag = result.Value.ETag.ToString();
        context.Response.Headers.LastModified = result.Value.LastModified.ToString("R", CultureInfo.InvariantCulture);
        context.Response.Headers.ContentMD5 = Convert.ToBase64String(listMd5);
        context.Response.Headers["x-ms-request-server-encrypted"] = "true";
        context.Response.ContentLength = 0;
    }

    /// <summary>
    /// True when the cache's write path keeps everything the write says: a block blob with no metadata, no content
    /// headers but the default type, and no condition but create-only (what the SDKs send for a plain upload).
    /// </summary>
    private static bool CacheKeepsWhatIsWritten(HttpRequest request)
    {
        IHeaderDictionary h = request.Headers;
        if (h.Keys.Any(k => KeptHeaderPrefixes.Any(p => k.StartsWith(p, StringComparison.OrdinalIgnoreCase))))
        {
            return false;
        }

        string blobType = h["x-ms-blob-content-type"].ToString();
        bool isBlockList = request.Query.ContainsKey("comp");
        string contentType = blobType.Length > 0 ? blobType : isBlockList ? string.Empty : h.ContentType.ToString();
        if (contentType.Length > 0 && !contentType.StartsWith("application/octet-stream", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        if (!isBlockList && (h.ContentEncoding.Count > 0 || h.ContentLanguage.Count > 0))
        {
            return false;
        }

        string ifNoneMatch = h.IfNoneMatch.ToString().Trim();
        return h.IfMatch.Count == 0 && h.IfModifiedSince.Count == 0 && h.IfUnmodifiedSince.Count == 0 && (ifNoneMatch.Length == 0 || ifNoneMatch == "*");
    }

    private static string? NullIfEmpty(Microsoft.Extensions.Primitives.StringValues value) => value.Count == 0 || value.ToString().Length == 0 ? null : value.ToString();
}
