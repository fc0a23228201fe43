namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// The strings the account key signs, as the reference's §7 builds them: a Shared Key request's canonical headers and
/// resource, and the fields of a service or account SAS in their signed order.
/// </summary>
internal static class StringToSign
{
    /// <summary>
    /// The Shared Key string-to-sign of <paramref name="request"/> for <paramref name="accountName"/>.
    /// </summary>
    /// <param name="request">The request as received.</param>
    /// <param name="accountName">The account the canonical resource starts with (<c>/&lt;account&gt;</c>).</param>
    /// <param name="sdkHeaderOrder">Sort the x-ms-* headers as the SDKs do (<see cref="SdkHeaderNameComparer"/>), not ordinally.</param>
    /// <param name="dateLineFromHeader">Fill the Date line from a real Date header; false signs it as an empty line (SDK style next to x-ms-date).</param>
    public static string ForSharedKey(HttpRequest request, string accountName, bool sdkHeaderOrder, bool dateLineFromHeader)
    {
        IHeaderDictionary headers = request.Headers;
        string contentLength = headers.ContentLength is { } length ? length.ToString(CultureInfo.InvariantCulture) : headers["Content-Length"].ToString();

        var builder = new StringBuilder(512);
        builder.Append(request.Method.ToUpperInvariant()).Append('\n');
        builder.Append(headers.ContentEncoding.ToString()).Append('\n');
        builder.Append(headers.ContentLanguage.ToString()).Append('\n');
        // Since version 2015-02-21 a zero length is signed as an empty line.
        builder.Append(contentLength == "0" ? "" : contentLength).Append('\n');
        builder.Append(headers.ContentMD5.ToString()).Append('\n');
        builder.Append(headers.ContentType.ToString()).Append('\n');
        // The SDKs send x-ms-date (signed below) and no Date; only a real Date header fills this line.
        builder.Append(dateLineFromHeader ? headers.Date.ToString() : "").Append('\n');
        builder.Append(headers.IfModifiedSince.ToString()).Append('\n');
        builder.Append(headers.IfMatch.ToString()).Append('\n');
        builder.Append(headers.IfNoneMatch.ToString()).Append('\n');
        builder.Append(headers.IfUnmodifiedSince.ToString()).Append('\n');
        builder.Append(headers.Range.ToString()).Append('\n');

        var canonicalHeaders = new List<KeyValuePair<string, string>>();
        foreach (var header in headers)
        {
            if (header.Key.StartsWith("x-ms-", StringComparison.OrdinalIgnoreCase))
            {
                canonicalHeaders.Add(new(header.Key.ToLowerInvariant(), header.Value.ToString()));
            }
        }

        IComparer<string> order = sdkHeaderOrder ? SdkHeaderNameComparer.Instance : StringComparer.Ordinal;
        canonicalHeaders.Sort((x, y) => order.Compare(x.Key, y.Key));
        foreach (var header in canonicalHeaders)
        {
            builder.Append(header.Key).Append(':').Append(header.Value).Append('\n');
        }

        (string rawPath, string rawQuery) = CanonicalRequest.RawPathAndQuery(request);
        builder.Append('/').Append(accountName).Append(rawPath);
        foreach (var parameter in CanonicalRequest.CanonicalQuery(rawQuery).OrderBy(p => p.Key, StringComparer.Ordinal))
        {
            builder.Append('\n').Append(parameter.Key).Append(':').Append(parameter.Value);
        }

        return builder.ToString();
    }

    /// <summary>The string-to-sign of an account SAS (version 2020-12-06 and later) from its query fields.</summary>
    public static string ForAccountSas(string accountName, IReadOnlyDictionary<string, string> query)
    {
        string Field(string name) => query.TryGetValue(name, out string? v) ? v : "";

        return string.Join('\n', accountName, Field("sp"), Field("ss"), Field("srt"), Field("st"), Field("se"), Field("sip"), Field("spr"), Field("sv"), Field("ses")) + "\n";
    }

    /// <summary>
    /// The string-to-sign of a service SAS (version 2020-12-06 and later, 16 fields) for a blob (<c>sr=b</c>) or a
    /// container (<c>sr=c</c>), from its query fields and the decoded names.
    /// </summary>
    public static string ForServiceSas(string accountName, IReadOnlyDictionary<string, string> query, string container, string blob)
    {
        string Field(string name) => query.TryGetValue(name, out string? v) ? v : "";

        string resourceType = Field("sr");
        return string.Join('\n',
            Field("sp"), Field("st"), Field("se"),
            // Not doubled for path style, and with the names decoded.
            resourceType == "b" ? $"/blob/{accountName}/{container}/{blob}" : $"/blob/{accountName}/{container}",
            Field("si"), Field("sip"), Field("spr"), Field("sv"), resourceType,
            "", // snapshot or version time: only for sr=bs/bv, forwarded before signing
            Field("ses"), Field("rscc"), Field("rscd"), Field("rsce"), Field("rscl"), Field("rsct"));
    }
}
