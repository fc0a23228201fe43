using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Configuration;
using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>
/// Reads the <c>extensions.faasCache</c> section of host.json into <see cref="FaaSCacheOptions"/>, walking the
/// configuration tree itself so that unknown keys, wrong types and out-of-range values stop start-up with a
/// <see cref="FaaSCacheConfigurationException"/> that names the key, the value and what is allowed.
/// </summary>
public static partial class FaaSCacheOptionsReader
{
    /// <summary>The configuration path of the section in host.json.</summary>
    public const string SectionPath = R.SectionPath;

    /// <summary>The only host.json schema version accepted.</summary>
    public const string HostJsonVersion = "2.0";

    private const int MaxShownValueLength = 120;

    /// <summary>Reads and validates a <c>faasCache</c> section; a missing or null section gives the defaults.</summary>
    /// <param name="section">The section, usually <c>configuration.GetSection("extensions:faasCache")</c>.</param>
    /// <returns>The options.</returns>
    /// <exception cref="FaaSCacheConfigurationException">A key is unknown, or a value has the wrong type or is out of range.</exception>
    public static FaaSCacheOptions Read(IConfigurationSection section) => ReadInto(section, new FaaSCacheOptions());

    /// <summary>
    /// Reads a <c>faasCache</c> section into <paramref name="options"/> (what the options pattern's binding step does:
    /// <c>AddOptions&lt;FaaSCacheOptions&gt;().BindFaaSCacheSection(...)</c>), with <see cref="Read"/>'s checks.
    /// </summary>
    /// <param name="section">The section.</param>
    /// <param name="options">The options to fill (defaults stay where the section says nothing).</param>
    /// <returns><paramref name="options"/>.</returns>
    /// <exception cref="FaaSCacheConfigurationException">A key is unknown, or a value has the wrong type or is out of range.</exception>
    public static FaaSCacheOptions ReadInto(IConfigurationSection section, FaaSCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(section);
        ArgumentNullException.ThrowIfNull(options);

        var given = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase);
        string prefix = section.Path;

        foreach ((string name, IConfigurationSection child, string path) in Members(section, prefix, R.RootKeys))
        {
            switch (name)
            {
                case R.Consistency:
                    options.Consistency = ReadEnum<ConsistencyPreset>(child, path, given);
                    break;
                case R.Persist:
                    options.Persist = ReadOptionalEnum<PersistMode>(child, path, given);
                    break;
                case R.Eviction:
                    ReadEviction(child, path, options.Eviction, given);
                    break;
                case R.MemoryHeadroomPercent:
                    options.MemoryHeadroomPercent = ReadInt(child, path, R.AllowedMemoryHeadroomPercent, given);
                    break;
                case R.MemoryLimitBytes:
                    options.MemoryLimitBytes = ReadOptionalLong(child, path, R.AllowedMemoryLimitBytes, given);
                    break;
                case R.CapacityBytes:
                    options.CapacityBytes = ReadOptionalLong(child, path, R.AllowedCapacityBytes, given);
                    break;
                case R.DoNotCache:
                    options.DoNotCache = ReadStringArray(child, path, given);
                    break;
                case R.SdkEndpoint:
                    options.SdkEndpoint = ReadBool(child, path, given);
                    break;
                case R.Prewarm:
                    ReadPrewarm(child, path, options.Prewarm, given);
                    break;
                case R.Scaling:
                    ReadScaling(child, path, options.Scaling, given);
                    break;
                case R.Membership:
                    ReadMembership(child, path, options.Membership, given);
                    break;
                default:
                    throw new InvalidOperationException($"Key '{name}' is in the schema but not read.");
            }
        }

        FaaSCacheConfigurationException? error = R.Check(options, prefix, given).FirstOrDefault();
        return error is null ? options : throw error;
    }

    /// <summary>
    /// The children of an object-valued section with their schema (camelCase) names and full paths; a scalar where
    /// the object belongs, or a key the schema does not know (compared ignoring case), is rejected.
    /// JSON null or an empty object has no children and so leaves every default in place.
    /// </summary>
    private static IEnumerable<(string Name, IConfigurationSection Section, string Path)> Members(
        IConfigurationSection section, string prefix, string[] allowedKeys)
    {
        if (!string.IsNullOrEmpty(section.Value) && !HasChildren(section))
        {
            throw new FaaSCacheConfigurationException(prefix, section.Value, R.AllowedObject(allowedKeys));
        }

        foreach (IConfigurationSection child in section.GetChildren())
        {
            string? name = Array.Find(allowedKeys, k => string.Equals(k, child.Key, StringComparison.OrdinalIgnoreCase));
            if (name is null)
            {
                throw FaaSCacheConfigurationException.UnknownKey(R.Join(prefix, child.Key), Show(child), allowedKeys);
            }

            yield return (name, child, R.Join(prefix, name));
        }
    }

    /// <summary>The scalar text of a setting (null for JSON null); an object or array is rejected.</summary>
    private static string? Scalar(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given)
    {
        if (HasChildren(section))
        {
            throw new FaaSCacheConfigurationException(path, Show(section), allowed);
        }

        given[path] = section.Value;
        return section.Value;
    }

    /// <summary>A scalar that must be present (JSON null and "" are rejected).</summary>
    private static string Required(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given)
    {
        string? text = Scalar(section, path, allowed, given);
        return string.IsNullOrEmpty(text) ? throw new FaaSCacheConfigurationException(path, text, allowed) : text;
    }

    /// <summary>A scalar where JSON null or "" means "not set".</summary>
    private static string? Optional(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given)
    {
        string? text = Scalar(section, path, allowed, given);
        return string.IsNullOrEmpty(text) ? null : text;
    }

    private static TEnum ReadEnum<TEnum>(IConfigurationSection section, string path, Dictionary<string, string?> given)
        where TEnum : struct, Enum
    {
        string allowed = R.AllowedEnum<TEnum>();
        string text = Required(section, path, allowed, given);
        return R.TryParseName(text, out TEnum value) ? value : throw new FaaSCacheConfigurationException(path, text, allowed);
    }

    private static TEnum? ReadOptionalEnum<TEnum>(IConfigurationSection section, string path, Dictionary<string, string?> given)
        where TEnum : struct, Enum
    {
        string allowed = R.AllowedEnum<TEnum>() + " or null";
        string? text = Optional(section, path, allowed, given);
        if (text is null)
        {
            return null;
        }

        return R.TryParseName(text, out TEnum value) ? value : throw new FaaSCacheConfigurationException(path, text, allowed);
    }

    private static bool ReadBool(IConfigurationSection section, string path, Dictionary<string, string?> given)
    {
        string text = Required(section, path, R.AllowedBoolean, given);
        if (string.Equals(text, "true", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        return string.Equals(text, "false", StringComparison.OrdinalIgnoreCase)
            ? false
            : throw new FaaSCacheConfigurationException(path, text, R.AllowedBoolean);
    }

    private static int ReadInt(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given)
    {
        string text = Required(section, path, allowed, given);
        return int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out int value)
            ? value
            : throw new FaaSCacheConfigurationException(path, text, allowed);
    }

    private static long ReadLong(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given) =>
        ParseLong(Required(section, path, allowed, given), path, allowed);

    private static long? ReadOptionalLong(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given) =>
        Optional(section, path, allowed, given) is { } text ? ParseLong(text, path, allowed) : null;

    private static long ParseLong(string text, string path, string allowed) =>
        long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value)
            ? value
            : throw new FaaSCacheConfigurationException(path, text, allowed);

    private static double ReadDouble(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given)
    {
        string text = Required(section, path, allowed, given);
        const NumberStyles styles = NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint | NumberStyles.AllowExponent;
        return double.TryParse(text, styles, CultureInfo.InvariantCulture, out double value) && double.IsFinite(value)
            ? value
            : throw new FaaSCacheConfigurationException(path, text, allowed);
    }

    private static TimeSpan ReadTimeSpan(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given) =>
        ParseTimeSpan(Required(section, path, allowed, given), path, allowed);

    private static TimeSpan? ReadOptionalTimeSpan(IConfigurationSection section, string path, string allowed, Dictionary<string, string?> given) =>
        Optional(section, path, allowed, given) is { } text ? ParseTimeSpan(text, path, allowed) : null;

    /// <summary>A time span in the constant ("c") format, [-][d.]hh:mm:ss[.fffffff]; a bare number (which .NET would read as days) is rejected.</summary>
    private static TimeSpan ParseTimeSpan(string text, string path, string allowed) =>
        text.Contains(':', StringComparison.Ordinal) && TimeSpan.TryParseExact(text, "c", CultureInfo.InvariantCulture, out TimeSpan value)
            ? value
            : throw new FaaSCacheConfigurationException(path, text, allowed);

    /// <summary>An array of strings; JSON null or [] is empty. Element ranges (non-empty) are checked by the rules.</summary>
    private static List<string> ReadStringArray(IConfigurationSection section, string path, Dictionary<string, string?> given)
    {
        if (!string.IsNullOrEmpty(section.Value) && !HasChildren(section))
        {
            throw new FaaSCacheConfigurationException(path, section.Value, R.AllowedDoNotCache);
        }

        var items = new List<(int Index, string Value)>();
        foreach (IConfigurationSection child in section.GetChildren())
        {
            if (!int.TryParse(child.Key, NumberStyles.None, CultureInfo.InvariantCulture, out int index))
            {
                throw new FaaSCacheConfigurationException(path, Show(section), R.AllowedDoNotCache);
            }

            string itemPath = R.Join(path, child.Key);
            if (HasChildren(child))
            {
                throw new FaaSCacheConfigurationException(itemPath, Show(child), R.AllowedGlob);
            }

            given[itemPath] = child.Value;
            items.Add((index, child.Value ?? string.Empty));
        }

        items.Sort((a, b) => a.Index.CompareTo(b.Index));
        return items.ConvertAll(i => i.Value);
    }

    private static bool HasChildren(IConfigurationSection section) => section.GetChildren().Any();

    /// <summary>A compact rendering of what was given: the text of a scalar, <c>{a: 1, b: [x, y]}</c> for an object or array.</summary>
    private static string? Show(IConfigurationSection section)
    {
        if (!HasChildren(section))
        {
            return section.Value;
        }

        var builder = new StringBuilder();
        Render(section, builder);
        return builder.Length <= MaxShownValueLength ? builder.ToString() : string.Concat(builder.ToString(0, MaxShownValueLength), "...");
    }

    private static void Render(IConfigurationSection section, StringBuilder builder)
    {
        List<IConfigurationSection> children = [.. section.GetChildren()];
        if (children.Count == 0)
        {
            builder.Append(section.Value ?? "null");
            return;
        }

        bool isArray = children.TrueForAll(c => int.TryParse(c.Key, NumberStyles.None, CultureInfo.InvariantCulture, out _));
        builder.Append(isArray ? '[' : '{');
        for (int i = 0; i < children.Count; i++)
        {
            if (i > 0)
            {
                builder.Append(", ");
            }

            if (!isArray)
            {
                builder.Append(children[i].Key).Append(": ");
            }

            Render(children[i], builder);
        }

        builder.Append(isArray ? ']' : '}');
    }

    /// <summary>"invalid JSON at line L, position P: reason" in the parser's own words (1-based line and position).</summary>
    private static string ParserReason(Exception ex)
    {
        for (Exception? e = ex; e is not null; e = e.InnerException)
        {
            if (e is JsonException json)
            {
                string reason = json.Message;
                foreach (string marker in new[] { " Path:", " LineNumber:" })
                {
                    int at = reason.IndexOf(marker, StringComparison.Ordinal);
                    if (at >= 0)
                    {
                        reason = reason[..at];
                    }
                }

                return json.LineNumber is { } line
                    ? string.Create(CultureInfo.InvariantCulture, $"invalid JSON at line {line + 1}, position {(json.BytePositionInLine ?? 0) + 1}: {reason}")
                    : "invalid JSON: " + reason;
            }
        }

        Exception innermost = ex;
        while (innermost.InnerException is not null)
        {
            innermost = innermost.InnerException;
        }

        return "invalid JSON: " + innermost.Message;
    }
}
