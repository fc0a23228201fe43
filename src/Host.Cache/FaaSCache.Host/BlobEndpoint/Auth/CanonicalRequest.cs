namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>The parts of a request a signature covers, read as the client sent them (MS:authorize-with-shared-key).</summary>
internal static class CanonicalRequest
{
    /// <summary>The path (still percent-encoded) and the query (without '?') exactly as the client sent them.</summary>
    public static (string Path, string Query) RawPathAndQuery(HttpRequest request)
    {
        string? raw = request.HttpContext.Features.Get<IHttpRequestFeature>()?.RawTarget;
        if (string.IsNullOrEmpty(raw))
        {
            // A server that does not keep the raw target: re-encode what it decoded (exact for the names the SDKs escape).
            string path = (request.PathBase + request.Path).ToUriComponent();
            string query = request.QueryString.HasValue ? request.QueryString.Value![1..] : "";
            return (path.Length == 0 ? "/" : path, query);
        }

        // Absolute form (a client that treats us as a proxy): the authority is not signed.
        int scheme = raw.IndexOf("://", StringComparison.Ordinal);
        if (scheme > 0 && raw[0] != '/')
        {
            int pathStart = raw.IndexOfAny(['/', '?'], scheme + 3);
            raw = pathStart < 0 ? "/" : raw[pathStart..];
        }

        int fragment = raw.IndexOf('#', StringComparison.Ordinal);
        if (fragment >= 0)
        {
            raw = raw[..fragment];
        }

        int question = raw.IndexOf('?', StringComparison.Ordinal);
        string rawPath = question < 0 ? raw : raw[..question];
        string rawQuery = question < 0 ? "" : raw[(question + 1)..];
        return (rawPath.Length == 0 || rawPath[0] != '/' ? "/" + rawPath : rawPath, rawQuery);
    }

    /// <summary>
    /// Query parameters by lowercase name with decoded values; a name given twice gets its values sorted and
    /// comma-joined (MS:authorize-with-shared-key). '+' decodes to a space, as the .NET signer
    /// (WebUtility.UrlDecode) and Azurite read it.
    /// </summary>
    public static Dictionary<string, string> CanonicalQuery(string rawQuery)
    {
        var values = new Dictionary<string, List<string>>(StringComparer.Ordinal);
        foreach (string pair in rawQuery.Split('&'))
        {
            if (pair.Length == 0)
            {
                continue;
            }

            int equals = pair.IndexOf('=', StringComparison.Ordinal);
            string name = Decode(equals < 0 ? pair : pair[..equals]).ToLowerInvariant();
            string value = equals < 0 ? "" : Decode(pair[(equals + 1)..]);
            if (!values.TryGetValue(name, out List<string>? list))
            {
                values[name] = list = [];
            }

            list.Add(value);
        }

        return values.ToDictionary(
            p => p.Key,
            p => p.Value.Count == 1 ? p.Value[0] : string.Join(',', p.Value.Order(StringComparer.Ordinal)),
            StringComparer.Ordinal);
    }

    // Uri.UnescapeDataString leaves a malformed %xx as it is instead of throwing.
    private static string Decode(string component) => Uri.UnescapeDataString(component.Replace('+', ' '));
}
