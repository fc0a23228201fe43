namespace FaaSCache.Host.Bindings;

/// <summary>
/// A binding path such as <c>images/{name}.png</c>: resolved from binding data (route and query values,
/// blob-trigger captures) for inputs and outputs, and matched against blob names for blob triggers.
/// <c>{rand-guid}</c> and <c>{datetime}</c> are filled in as the Functions host does.
/// </summary>
public sealed partial class BindingTemplate
{
    private readonly string _template;
    private readonly Regex _matcher;

    /// <summary>Initializes a new instance of the <see cref="BindingTemplate"/> class.</summary>
    public BindingTemplate(string template)
    {
        _template = template;
        Parameters = Placeholder().Matches(template).Select(m => m.Groups[1].Value).ToList();
        var pattern = new StringBuilder("^");
        int last = 0;
        foreach (Match m in Placeholder().Matches(template))
        {
            pattern.Append(Regex.Escape(template[last..m.Index]));
            string name = m.Groups[1].Value;
            pattern.Append(IsIdentifier(name) && !pattern.ToString().Contains($"(?<{name}>", StringComparison.Ordinal) ? $"(?<{name}>.+?)" : ".+?");
            last = m.Index + m.Length;
        }

        pattern.Append(Regex.Escape(template[last..])).Append('$');
        _matcher = new Regex(pattern.ToString(), RegexOptions.CultureInvariant, TimeSpan.FromSeconds(1));
    }

    /// <summary>Gets the parameter names in order.</summary>
    public IReadOnlyList<string> Parameters { get; }

    /// <summary>Gets the container part when it holds no parameter, else null.</summary>
    public string? LiteralContainer
    {
        get
        {
            int slash = _template.IndexOf('/', StringComparison.Ordinal);
            string container = slash < 0 ? _template : _template[..slash];
            return container.Contains('{', StringComparison.Ordinal) ? null : container;
        }
    }

    /// <summary>Fills the parameters from <paramref name="values"/> (case-insensitive names).</summary>
    public string Resolve(IReadOnlyDictionary<string, string> values, string bindingName)
    {
        return Placeholder().Replace(_template, m =>
        {
            string name = m.Groups[1].Value;
            if (name.Equals("rand-guid", StringComparison.OrdinalIgnoreCase))
            {
                return Guid.NewGuid().ToString();
            }

            if (name.Equals("datetime", StringComparison.OrdinalIgnoreCase))
            {
                return DateTime.UtcNow.ToString("yyyy-MM-ddTHH-mm-ssZ", CultureInfo.InvariantCulture);
            }

            if (values.TryGetValue(name, out string? value))
            {
                // A URL collapses "." and ".." segments (and reads '\' as '/'), and storage's URLs carry no empty one (a
                // leading '/' would name another container): such a value would leave the binding's container.
                string[] segments = value.Split('/', '\\');
                if (segments.Any(segment => segment is "." or "..") || (segments.Length > 1 && segments.Any(segment => segment.Length == 0)))
                {
                    throw new BindingException(
                        $"Binding '{bindingName}' path '{_template}': the value '{value}' of {{{name}}} has an empty, '.' or '..' path segment, which would leave the binding's container.");
                }

                return value;
            }

            throw new BindingException(
                $"Binding '{bindingName}' path '{_template}': no value for {{{name}}} (known: {(values.Count == 0 ? "none" : string.Join(", ", values.Keys.Order(StringComparer.Ordinal)))}).");
        });
    }

    /// <summary>Matches a blob key (<c>container/blob</c>); returns the captured values or null.</summary>
    public Dictionary<string, string>? Match(string key)
    {
        Match m = _matcher.Match(key);
        if (!m.Success)
        {
            return null;
        }

        var captures = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (string name in Parameters.Where(IsIdentifier))
        {
            if (m.Groups[name].Success)
            {
                captures[name] = m.Groups[name].Value;
            }
        }

        return captures;
    }

    /// <inheritdoc />
    public override string ToString() => _template;

    private static bool IsIdentifier(string name) => name.Length > 0 && char.IsAsciiLetter(name[0]) && name.All(c => char.IsAsciiLetterOrDigit(c) || c == '_');

    [GeneratedRegex(@"\{([^{}]+)\}", RegexOptions.CultureInvariant)]
    private static partial Regex Placeholder();
}
