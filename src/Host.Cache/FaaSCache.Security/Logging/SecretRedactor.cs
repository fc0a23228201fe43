using System.Collections.Concurrent;
using System.Text.RegularExpressions;

namespace FaaSCache.Security.Logging;

/// <summary>
/// Takes secrets out of text before it is logged or shown: SAS signatures (<c>sig=</c>), function keys in a query
/// (<c>code=</c>) or header (<c>x-functions-key</c>), account keys and SAS tokens in connection strings, Shared Key and
/// Bearer credentials, and any literal secret registered with <see cref="Add"/> (the account keys, the function keys).
/// </summary>
public sealed partial class SecretRedactor
{
    /// <summary>What a secret is replaced with.</summary>
    public const string Mask = "REDACTED";

    private readonly ConcurrentDictionary<string, byte> _literals = new(StringComparer.Ordinal);

    /// <summary>Registers literal secrets (values shorter than 8 characters are ignored: they would mask ordinary words).</summary>
    public void Add(IEnumerable<string?> secrets)
    {
        ArgumentNullException.ThrowIfNull(secrets);
        foreach (string? secret in secrets)
        {
            if (secret is { Length: >= 8 })
            {
                _literals.TryAdd(secret, 0);
            }
        }
    }

    /// <summary>The text with every secret it carries replaced by <see cref="Mask"/>.</summary>
    public string Redact(string text)
    {
        if (string.IsNullOrEmpty(text))
        {
            return text;
        }

        string result = Patterns().Replace(text, m => m.Groups["keep"].Value + Mask);
        foreach (string secret in _literals.Keys)
        {
            if (result.Contains(secret, StringComparison.Ordinal))
            {
                result = result.Replace(secret, Mask, StringComparison.Ordinal);
            }

            // A key also travels percent-encoded in URLs.
            string encoded = Uri.EscapeDataString(secret);
            if (!ReferenceEquals(encoded, secret) && encoded != secret && result.Contains(encoded, StringComparison.OrdinalIgnoreCase))
            {
                result = result.Replace(encoded, Mask, StringComparison.OrdinalIgnoreCase);
            }
        }

        return result;
    }

    // Query parameters sig= and code=; connection-string AccountKey= and SharedAccessSignature=; the credentials of the
    // Shared Key, SharedKeyLite and Bearer schemes; the x-functions-key header as it appears in a dump of headers.
    [GeneratedRegex(
        @"(?<keep>(?<![A-Za-z0-9_-])(?:sig|code)=)[^&\s""'<>;,]+"
        + @"|(?<keep>(?i:AccountKey|SharedAccessSignature)=)[^;\s""'<>]+"
        + @"|(?<keep>\b(?i:SharedKey|SharedKeyLite)\s+[^:\s""']+:)[A-Za-z0-9+/=%]+"
        + @"|(?<keep>\b(?i:Bearer)\s+)[A-Za-z0-9._~+/=-]+"
        + @"|(?<keep>(?i:x-functions-key)[""']?\s*[:=,]\s*[""']?)[^\s""',;}\]]+",
        RegexOptions.CultureInvariant)]
    private static partial Regex Patterns();
}
