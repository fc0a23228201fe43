namespace FaaSCache.Host.BlobEndpoint;

/// <summary>What a request to the endpoint names, path-style as Azurite takes it: <c>/&lt;account&gt;/&lt;container&gt;/&lt;blob&gt;</c>.</summary>
/// <param name="Account">The account (the first path segment).</param>
/// <param name="Container">The container, or empty for an account-level request.</param>
/// <param name="Blob">The blob name, percent-decoded (slashes kept), or empty for a container-level request.</param>
/// <param name="RawPath">The path exactly as sent, still percent-encoded (what a Shared Key signature covers).</param>
/// <param name="RawQuery">The query exactly as sent, with its leading <c>?</c>, or empty.</param>
public sealed record BlobAddress(string Account, string Container, string Blob, string RawPath, string RawQuery)
{
    /// <summary>Gets the cache key, <c>container/blob</c>.</summary>
    public string Key => Container + "/" + Blob;

    /// <summary>Gets a value indicating whether the request names one blob.</summary>
    public bool IsBlob => Container.Length > 0 && Blob.Length > 0;

    /// <summary>Reads the address from the request target as sent (before ASP.NET Core decodes the path).</summary>
    public static BlobAddress Parse(HttpRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        string target = request.HttpContext.Features.Get<IHttpRequestFeature>()?.RawTarget ?? (request.PathBase + request.Path + request.QueryString);
        int q = target.IndexOf('?', StringComparison.Ordinal);
        string rawPath = q < 0 ? target : target[..q];
        string rawQuery = q < 0 ? string.Empty : target[q..];
        string path = rawPath.TrimStart('/');
        string[] parts = path.Split('/', 3);
        string account = parts.Length > 0 ? Decode(parts[0]) : string.Empty;
        string container = parts.Length > 1 ? Decode(parts[1]) : string.Empty;
        string blob = parts.Length > 2 ? Decode(parts[2]) : string.Empty;
        return new BlobAddress(account, container, blob, rawPath, rawQuery);
    }

    /// <summary>
    /// Why the names this request addresses cannot be acted on, or null: a container name storage would refuse, or a
    /// blob name with an empty, '.' or '..' segment (raw or percent-encoded; see <see cref="FaaSCache.Storage.BlobKey.WhyInvalidBlobName"/>).
    /// </summary>
    public string? WhyInvalidName()
    {
        if (Container.Length > 0 && Container is not ("$root" or "$logs" or "$web")
            && (Container.Length is < 3 or > 63 || Container.Any(c => !(char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c == '-'))
                || Container[0] == '-' || Container[^1] == '-' || Container.Contains("--", StringComparison.Ordinal)))
        {
            return $"the container name '{StorageRequestAuthenticator.Shorten(Container)}' is not 3 to 63 lowercase letters, digits and single '-' (not first or last)";
        }

        // A path that goes on past the container ('/acct/c/') names a blob, even an empty one.
        bool namesBlob = Blob.Length > 0 || RawPath.TrimStart('/').Split('/', 3).Length > 2;
        if (namesBlob && FaaSCache.Storage.BlobKey.WhyInvalidBlobName(Blob) is { } why)
        {
            return $"the blob name '{StorageRequestAuthenticator.Shorten(Blob)}' {why}";
        }

        return null;
    }

    /// <summary>Percent-decodes <c>%xx</c> only: a literal <c>+</c> stays a plus (block ids and blob names are not form-encoded).</summary>
    public static string Decode(string value)
    {
        ArgumentNullException.ThrowIfNull(value);
        if (!value.Contains('%', StringComparison.Ordinal))
        {
            return value;
        }

        var bytes = new List<byte>(value.Length);
        for (int i = 0; i < value.Length; i++)
        {
            if (value[i] == '%' && i + 2 < value.Length && IsHex(value[i + 1]) && IsHex(value[i + 2]))
            {
                bytes.Add(Convert.ToByte(value.Substring(i + 1, 2), 16));
                i += 2;
            }
            else
            {
                bytes.AddRange(Encoding.UTF8.GetBytes(value[i].ToString()));
            }
        }

        return Encoding.UTF8.GetString([.. bytes]);
    }

    /// <summary>One query parameter, <c>%xx</c>-decoded, or null.</summary>
    public string? Query(string name)
    {
        if (RawQuery.Length <= 1)
        {
            return null;
        }

        foreach (string pair in RawQuery[1..].Split('&'))
        {
            int eq = pair.IndexOf('=', StringComparison.Ordinal);
            string key = Decode(eq < 0 ? pair : pair[..eq]);
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                return eq < 0 ? string.Empty : Decode(pair[(eq + 1)..]);
            }
        }

        return null;
    }

    /// <summary>The names of the query parameters, lower-cased.</summary>
    public IReadOnlyList<string> QueryNames()
        => RawQuery.Length <= 1 ? [] : [.. RawQuery[1..].Split('&').Where(p => p.Length > 0).Select(p => Decode(p.Split('=', 2)[0]).ToLowerInvariant())];

    private static bool IsHex(char c) => char.IsAsciiHexDigit(c);
}
