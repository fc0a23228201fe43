namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// A storage connection string as the SDKs read it (<c>Key=Value;...</c>, keys ignoring case, values may hold
/// <c>=</c>), with Azurite's shorthand <c>UseDevelopmentStorage=true</c> expanded to what it means.
/// </summary>
public sealed class StorageConnectionString
{
    /// <summary>Azurite's account.</summary>
    public const string DevelopmentAccount = "devstoreaccount1";

    /// <summary>Azurite's well-known key (public: it is in every emulator's documentation).</summary>
    public const string DevelopmentKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    private readonly List<KeyValuePair<string, string>> _parts;

    private StorageConnectionString(List<KeyValuePair<string, string>> parts) => _parts = parts;

    /// <summary>Gets the account name, or null.</summary>
    public string? AccountName => Get("AccountName");

    /// <summary>Gets the account key (base64), or null (a SAS-only or identity-based connection).</summary>
    public string? AccountKey => Get("AccountKey");

    /// <summary>Parses <paramref name="value"/>; null when it is not a storage connection string with an account.</summary>
    public static StorageConnectionString? TryParse(string? value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }

        var parts = new List<KeyValuePair<string, string>>();
        foreach (string segment in value.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            int eq = segment.IndexOf('=', StringComparison.Ordinal);
            if (eq <= 0)
            {
                return null;
            }

            parts.Add(new(segment[..eq].Trim(), segment[(eq + 1)..].Trim()));
        }

        var parsed = new StorageConnectionString(parts);
        if (string.Equals(parsed.Get("UseDevelopmentStorage"), "true", StringComparison.OrdinalIgnoreCase))
        {
            return new StorageConnectionString(
            [
                new("DefaultEndpointsProtocol", "http"),
                new("AccountName", DevelopmentAccount),
                new("AccountKey", DevelopmentKey),
                new("BlobEndpoint", $"http://127.0.0.1:10000/{DevelopmentAccount}"),
                new("QueueEndpoint", $"http://127.0.0.1:10001/{DevelopmentAccount}"),
                new("TableEndpoint", $"http://127.0.0.1:10002/{DevelopmentAccount}"),
            ]);
        }

        return parsed.AccountName is null ? null : parsed;
    }

    /// <summary>The value of <paramref name="key"/>, or null.</summary>
    public string? Get(string key) => _parts.FindLast(p => string.Equals(p.Key, key, StringComparison.OrdinalIgnoreCase)) is { Key: not null } p ? p.Value : null;

    /// <summary>
    /// The same connection with its blob endpoint at <paramref name="blobEndpoint"/>. Queue and table endpoints are
    /// written out explicitly first (an <c>EndpointSuffix</c> alone would otherwise still derive them, but not the blob
    /// one once BlobEndpoint is given, which is what is wanted).
    /// </summary>
    public string WithBlobEndpoint(Uri blobEndpoint)
    {
        ArgumentNullException.ThrowIfNull(blobEndpoint);
        var parts = _parts.Where(p => !string.Equals(p.Key, "BlobEndpoint", StringComparison.OrdinalIgnoreCase)).ToList();
        parts.Add(new("BlobEndpoint", blobEndpoint.ToString().TrimEnd('/')));
        return string.Join(';', parts.Select(p => $"{p.Key}={p.Value}"));
    }
}
