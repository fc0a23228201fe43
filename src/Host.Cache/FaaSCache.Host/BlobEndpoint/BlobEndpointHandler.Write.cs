using System.Globalization;
using System.Xml;
using Azure;
using Azure.Storage.Blobs.Models;
using FaaSCache.Caching;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Put Blob, Put Block, Put Block List and Delete Blob.</summary>
public sealed partial class BlobEndpointHandler
{
    /// <summary>The largest single Put Blob or Put Block body taken in memory; larger ones go to storage as sent.</summary>
    public const long MaxBufferedBody = 512L * 1024 * 1024;

    private const long MaxBlockListBytes = 8L * 1024 * 1024;

    private static readonly string[] KeptHeaderPrefixes = ["x-ms-meta-", "x-ms-tags", "x-ms-access-tier", "x-ms-immutability", "x-ms-legal-hold", "x-ms-encryption-scope", "x-ms-blob-content-encoding", "x-ms-blob-content-language", "x-ms-blob-content-disposition", "x-ms-blob-cache-control"];

    private async Task PutBlobAsync(HttpContext context, BlobAddress address)
    {
        HttpRequest request = context.Request;
        if (!CacheKeepsWhatIsWritten(request) || request.ContentLength > MaxBufferedBody)
        {
            await ForwardWriteAwareAsync(context, address, ServedOperation.PutBlob).ConfigureAwait(false);
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
        if (!IsValidBlockId(id, out string why))
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidQueryParameterValue", $"Value for one of the query parameters specified in the request URI is invalid: blockid '{id}' {why}.",
                [new("QueryParameterName", "blockid"), new("QueryParameterValue", id)]).ConfigureAwait(false);
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

        List<string> ids;
        try
        {
            ids = ParseBlockList(xml);
        }
        catch (XmlException e)
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidXmlDocument", $"XML specified is not syntactically valid: {e.Message}").ConfigureAwait(false);
            return;
        }

        (IReadOnlyList<byte[]>? blocks, string? missing) = _blocks.Resolve(address.Key, ids);
        if (blocks is null)
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidBlockList", $"The specified block list is invalid: block '{missing}' was not put to this endpoint (only blocks put here can be committed here).").ConfigureAwait(false);
            return;
        }

        byte[] content = GC.AllocateUninitializedArray<byte>(checked((int)blocks.Sum(b => (long)b.Length)));
        int at = 0;
        foreach (byte[] block in blocks)
        {
            block.CopyTo(content, at);
            at += block.Length;
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
        }
    }

    private Task DeleteAsync(HttpContext context, BlobAddress address)
        => ForwardWriteAwareAsync(context, address, ServedOperation.Delete);

    /// <summary>The write path: owner, persistence under the preset, blob triggers once (create-only checked first).</summary>
    private async Task WriteThroughCacheAsync(HttpContext context, BlobAddress address, byte[] content, byte[]? contentMd5, byte[] answerMd5)
    {
        bool createOnly = context.Request.Headers.IfNoneMatch.ToString().Trim() == "*";
        SemaphoreSlim gate = _createLocks[(address.Key.GetHashCode(StringComparison.Ordinal) & int.MaxValue) % _createLocks.Length];
        if (createOnly)
        {
            await gate.WaitAsync(context.RequestAborted).ConfigureAwait(false);
        }

        WriteReceipt receipt;
        try
        {
            if (createOnly && (_admin.Contains(address.Key) || await _storage.GetVersionAsync(address.Key, context.RequestAborted).ConfigureAwait(false) is not null))
            {
                await StorageErrors.WriteAsync(context, 409, "BlobAlreadyExists", "The specified blob already exists.").ConfigureAwait(false);
                return;
            }

            receipt = await _cache.WriteAsync(address.Key, content, context.RequestAborted).ConfigureAwait(false);
        }
        finally
        {
            if (createOnly)
            {
                gate.Release();
            }
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

        _admin.Remove(address.Key);
        _properties.Forget(address.Key);
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

    /// <summary>Block ids are canonical base64 of at most 64 bytes (the SDKs send 64 characters).</summary>
    private static bool IsValidBlockId(string id, out string why)
    {
        why = string.Empty;
        if (id.Length == 0)
        {
            why = "is empty";
            return false;
        }

        byte[] decoded = new byte[id.Length];
        if (!Convert.TryFromBase64String(id, decoded, out int length) || Convert.ToBase64String(decoded, 0, length) != id)
        {
            why = "is not canonical base64";
            return false;
        }

        if (length > 64)
        {
            why = $"decodes to {length} bytes, more than 64";
            return false;
        }

        return true;
    }

    /// <summary>The ids of a block list in document order (Latest, Uncommitted and Committed alike: only staged blocks exist here).</summary>
    private static List<string> ParseBlockList(byte[] xml)
    {
        var settings = new XmlReaderSettings { DtdProcessing = DtdProcessing.Prohibit, XmlResolver = null, IgnoreWhitespace = true };
        using var reader = XmlReader.Create(new MemoryStream(xml), settings);
        var ids = new List<string>();
        reader.MoveToContent();
        if (reader.LocalName != "BlockList")
        {
            throw new XmlException($"the root element is '{reader.LocalName}', not 'BlockList'");
        }

        reader.Read();
        while (!reader.EOF)
        {
            if (reader.NodeType == XmlNodeType.Element && reader.LocalName is "Latest" or "Uncommitted" or "Committed")
            {
                // Reading the content moves to the next node: no Read() after it.
                ids.Add(reader.ReadElementContentAsString().Trim());
            }
            else
            {
                reader.Read();
            }
        }

        return ids;
    }

    private static string? NullIfEmpty(Microsoft.Extensions.Primitives.StringValues value) => value.Count == 0 || value.ToString().Length == 0 ? null : value.ToString();
}
