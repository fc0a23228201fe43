namespace FaaSCache.Host.BlobEndpoint;

/// <summary>A blob's properties as Get Blob returns them.</summary>
public sealed record BlobProperties(
    string ETag,
    long Length,
    DateTimeOffset LastModified,
    DateTimeOffset CreatedOn,
    string ContentType,
    byte[]? ContentMd5,
    IReadOnlyDictionary<string, string> Metadata,
    string BlobType = "BlockBlob",
    string? ContentEncoding = null,
    string? ContentLanguage = null,
    string? ContentDisposition = null,
    string? CacheControl = null,
    string? AccessTier = "Hot");

/// <summary>The headers the SDKs parse, the version check, ranges and conditions: one place for the protocol's details.</summary>
public static partial class BlobHeaders
{
    /// <summary>The oldest service version this subset answers (its shape has not changed since).</summary>
    public const string OldestVersion = "2019-02-02";

    /// <summary>Stamps <c>x-ms-request-id</c>, <c>x-ms-version</c>, <c>Date</c> and the client request id echo; returns the request id.</summary>
    public static string StampCommon(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        IHeaderDictionary headers = context.Response.Headers;
        string requestId = context.TraceIdentifier is { Length: > 0 } id && Guid.TryParse(id, out _) ? id : Guid.NewGuid().ToString();
        headers["x-ms-request-id"] = requestId;
        string version = context.Request.Headers["x-ms-version"].ToString();
        if (version.Length > 0)
        {
            headers["x-ms-version"] = version;
        }

        headers.Date = DateTimeOffset.UtcNow.ToString("R", CultureInfo.InvariantCulture);
        // .NET throws when the echo differs from what it sent, so echo it exactly.
        string clientId = context.Request.Headers["x-ms-client-request-id"].ToString();
        if (clientId.Length > 0)
        {
            headers["x-ms-client-request-id"] = clientId;
        }

        return requestId;
    }

    /// <summary>True when <paramref name="version"/> is a well-formed service version this subset answers.</summary>
    public static bool IsSupportedVersion(string? version)
        => version is { Length: 10 }
            && DateOnly.TryParseExact(version, "yyyy-MM-dd", CultureInfo.InvariantCulture, DateTimeStyles.None, out _)
            && string.CompareOrdinal(version, OldestVersion) >= 0;

    /// <summary>Writes a blob's property headers (Get Blob and Get Blob Properties).</summary>
    public static void WriteProperties(HttpResponse response, BlobProperties p, bool head)
    {
        ArgumentNullException.ThrowIfNull(response);
        ArgumentNullException.ThrowIfNull(p);
        IHeaderDictionary h = response.Headers;
        response.ContentType = p.ContentType;
        h.ETag = Quote(p.ETag);
        h.LastModified = p.LastModified.ToString("R", CultureInfo.InvariantCulture);
        h["x-ms-creation-time"] = p.CreatedOn.ToString("R", CultureInfo.InvariantCulture);
        h.AcceptRanges = "bytes";
        h["x-ms-blob-type"] = p.BlobType;
        h["x-ms-lease-state"] = "available";
        h["x-ms-lease-status"] = "unlocked";
        h["x-ms-server-encrypted"] = "true";
        SetIf(h, "Content-Encoding", p.ContentEncoding);
        SetIf(h, "Content-Language", p.ContentLanguage);
        SetIf(h, "Content-Disposition", p.ContentDisposition);
        SetIf(h, "Cache-Control", p.CacheControl);
        foreach ((string name, string value) in p.Metadata)
        {
            h["x-ms-meta-" + name] = value;
        }

        if (head && p.AccessTier is { } tier)
        {
            h["x-ms-access-tier"] = tier;
            h["x-ms-access-tier-inferred"] = "true";
        }
    }

    /// <summary>Content-MD5: the protocol's integrity check of a body, not a security primitive (storage defines it as MD5).</summary>
#pragma warning disable CA5351 // The Blob service's Content-MD5 is MD5 by definition.
    public static byte[] Md5(ReadOnlySpan<byte> data) => System.Security.Cryptography.MD5.HashData(data);
#pragma warning restore CA5351

    /// <summary>An ETag in its quoted form, as storage sends it and the SDKs echo it.</summary>
    public static string Quote(string etag) => etag.StartsWith('"') ? etag : "\"" + etag + "\"";

    /// <summary>
    /// The range a read asks for: <c>x-ms-range</c> wins over <c>Range</c>; only <c>bytes=S-</c> and <c>bytes=S-E</c> are
    /// defined, and storage ignores anything else (the whole blob, 200), so a malformed range is "no range" here too.
    /// </summary>
    public static (long Start, long? End)? ParseRange(HttpRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        string value = request.Headers["x-ms-range"].ToString();
        if (value.Length == 0)
        {
            value = request.Headers.Range.ToString();
        }

        Match m = RangePattern().Match(value);
        if (!m.Success || !long.TryParse(m.Groups[1].Value, NumberStyles.None, CultureInfo.InvariantCulture, out long start))
        {
            return null;
        }

        if (m.Groups[2].Value.Length == 0)
        {
            return (start, null);
        }

        return long.TryParse(m.Groups[2].Value, NumberStyles.None, CultureInfo.InvariantCulture, out long end) && end >= start ? (start, end) : null;
    }

    /// <summary>What a read's conditions say: serve, 304 or 412.</summary>
    public static int EvaluateReadConditions(HttpRequest request, string etag, DateTimeOffset lastModified)
    {
        ArgumentNullException.ThrowIfNull(request);
        string quoted = Quote(etag);
        string ifMatch = request.Headers.IfMatch.ToString();
        if (ifMatch.Length > 0 && !MatchesAny(ifMatch, quoted))
        {
            return StatusCodes.Status412PreconditionFailed;
        }

        if (ifMatch.Length == 0 && TryDate(request.Headers.IfUnmodifiedSince, out DateTimeOffset unmodifiedSince) && Seconds(lastModified) > unmodifiedSince)
        {
            return StatusCodes.Status412PreconditionFailed;
        }

        string ifNoneMatch = request.Headers.IfNoneMatch.ToString();
        if (ifNoneMatch.Length > 0)
        {
            return MatchesAny(ifNoneMatch, quoted) ? StatusCodes.Status304NotModified : StatusCodes.Status200OK;
        }

        if (TryDate(request.Headers.IfModifiedSince, out DateTimeOffset modifiedSince) && Seconds(lastModified) <= modifiedSince)
        {
            return StatusCodes.Status304NotModified;
        }

        return StatusCodes.Status200OK;
    }

    /// <summary>True when a comma-separated list of ETags (or <c>*</c>) names <paramref name="quoted"/>.</summary>
    public static bool MatchesAny(string list, string quoted)
        => list.Split(',').Select(e => e.Trim()).Any(e => e == "*" || e == quoted || Quote(e) == quoted);

    private static DateTimeOffset Seconds(DateTimeOffset t) => new(t.Ticks - (t.Ticks % TimeSpan.TicksPerSecond), t.Offset);

    private static bool TryDate(Microsoft.Extensions.Primitives.StringValues value, out DateTimeOffset date)
        => DateTimeOffset.TryParseExact(value.ToString(), "R", CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out date);

    private static void SetIf(IHeaderDictionary headers, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            headers[name] = value;
        }
    }

    [GeneratedRegex(@"^\s*bytes=(\d+)-(\d*)\s*$", RegexOptions.CultureInvariant)]
    private static partial Regex RangePattern();
}
