using System.Text.RegularExpressions;

namespace FaaSCache.Caching;

/// <summary>
/// <c>doNotCache</c> patterns over keys (<c>container/blob</c>): <c>*</c> matches within one path segment,
/// <c>**</c> across segments, <c>?</c> one character other than '/'.
/// </summary>
public sealed class KeyGlob
{
    private readonly Regex? _regex;

    /// <summary>Initializes a new instance of the <see cref="KeyGlob"/> class.</summary>
    public KeyGlob(IEnumerable<string> patterns)
    {
        var parts = patterns.Where(p => !string.IsNullOrWhiteSpace(p)).Select(ToRegex).ToList();
        if (parts.Count > 0)
        {
            _regex = new Regex("^(?:" + string.Join("|", parts) + ")$", RegexOptions.CultureInvariant | RegexOptions.Compiled, TimeSpan.FromSeconds(1));
        }
    }

    /// <summary>True when <paramref name="key"/> matches any pattern.</summary>
    public bool IsMatch(string key) => _regex?.IsMatch(key) ?? false;

    private static string ToRegex(string pattern)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < pattern.Length; i++)
        {
            char c = pattern[i];
            if (c == '*' && i + 1 < pattern.Length && pattern[i + 1] == '*')
            {
                sb.Append(".*");
                i++;
            }
            else if (c == '*')
            {
                sb.Append("[^/]*");
            }
            else if (c == '?')
            {
                sb.Append("[^/]");
            }
            else
            {
                sb.Append(Regex.Escape(c.ToString()));
            }
        }

        return sb.ToString();
    }
}
