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

    /// <summary>The keys of one function under <c>results.functions</c>, parsed as the table's keys of their kinds.</summary>
    private static readonly Dictionary<string, HostJsonKey> ResultFunctionKeys = new[]
    {
        FunctionKey("key", HostJsonKind.Strings, "allowed values are non-empty arrays of key parts (body, method, json:<property path>, query:<name>, route:<name>, header:<name>)"),
        FunctionKey("ttl", HostJsonKind.TimeSpan, R.AllowedResultTtl),
        FunctionKey("maxBytes", HostJsonKind.WholeNumber, R.AllowedResultMaxBytes),
        FunctionKey("location", HostJsonKind.Name, R.AllowedEnum<ResultLocation>() + " or null", nullable: true, names: [.. Enum.GetValues<ResultLocation>().Cast<Enum>()]),
        FunctionKey("skipOutputs", HostJsonKind.Boolean, R.AllowedBoolean),
    }.ToDictionary(k => k.Path, StringComparer.Ordinal);

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
        ReadGroup(section, section.Path, string.Empty, options, given);
        FaaSCacheConfigurationException? error = HostJsonKeys.Check(options, section.Path, given).FirstOrDefault();
        return error is null ? options : throw error;
    }

    /// <summary>The members of the section's top (<paramref name="group"/> "") or of one group, each read as the key table says.</summary>
    private static void ReadGroup(IConfigurationSection section, string path, string group, FaaSCacheOptions options, Dictionary<string, string?> given)
    {
        foreach ((string name, IConfigurationSection child, string childPath) in Members(section, path, HostJsonKeys.NamesIn(group)))
        {
            if (group.Length == 0 && HostJsonKeys.Groups.ContainsKey(name))
            {
                ReadGroup(child, childPath, name, options, given);
                continue;
            }

            HostJsonKey key = HostJsonKeys.Find(group.Length == 0 ? name : R.Join(group, name))
                ?? throw new InvalidOperationException($"Key '{name}' is listed but not in the table.");
            object? value = ReadValue(key, child, childPath, given);
            try
            {
                key.Set(options, value);
            }
            catch (OverflowException)
            {
                throw new FaaSCacheConfigurationException(childPath, given.GetValueOrDefault(childPath), key.Allowed);
            }
        }
    }

    /// <summary>One value, parsed by the key's kind; JSON null or "" is null where the key allows it.</summary>
    private static object? ReadValue(HostJsonKey key, IConfigurationSection section, string path, Dictionary<string, string?> given)
    {
        if (key.Kind == HostJsonKind.Strings)
        {
            return ReadStringArray(section, path, given, R.AllowedDoNotCache, R.AllowedGlob);
        }

        if (key.Kind == HostJsonKind.FunctionMap)
        {
            return ReadResultFunctions(section, path, given);
        }

        string? text = key.Nullable ? Optional(section, path, key.Allowed, given) : Required(section, path, key.Allowed, given);
        if (text is null)
        {
            return null;
        }

        const NumberStyles number = NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint | NumberStyles.AllowExponent;
        object? value = key.Kind switch
        {
            HostJsonKind.Name => key.Names.FirstOrDefault(n => string.Equals(R.Name(n), text, StringComparison.OrdinalIgnoreCase)),
            HostJsonKind.Boolean => string.Equals(text, "true", StringComparison.OrdinalIgnoreCase) ? true
                : string.Equals(text, "false", StringComparison.OrdinalIgnoreCase) ? false : null,
            HostJsonKind.Text => text,
            HostJsonKind.WholeNumber => long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long l) ? l : null,
            HostJsonKind.Number => double.TryParse(text, number, CultureInfo.InvariantCulture, out double d) && double.IsFinite(d) ? d : null,

            // The constant ("c") format, [-][d.]hh:mm:ss[.fffffff]; a bare number (which .NET would read as days) is rejected.
            HostJsonKind.TimeSpan => text.Contains(':', StringComparison.Ordinal) && TimeSpan.TryParseExact(text, "c", CultureInfo.InvariantCulture, out TimeSpan t) ? t : null,
            _ => null,
        };
        return value ?? throw new FaaSCacheConfigurationException(path, text, key.Allowed);
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

    /// <summary>An array of strings; JSON null or [] is empty. Element ranges (non-empty) are checked by the rules.</summary>
    private static List<string> ReadStringArray(IConfigurationSection section, string path, Dictionary<string, string?> given, string allowedArray, string allowedItem)
    {
        if (!string.IsNullOrEmpty(section.Value) && !HasChildren(section))
        {
            throw new FaaSCacheConfigurationException(path, section.Value, allowedArray);
        }

        var items = new List<(int Index, string Value)>();
        foreach (IConfigurationSection child in section.GetChildren())
        {
            if (!int.TryParse(child.Key, NumberStyles.None, CultureInfo.InvariantCulture, out int index))
            {
                throw new FaaSCacheConfigurationException(path, Show(section), allowedArray);
            }

            string itemPath = R.Join(path, child.Key);
            if (HasChildren(child))
            {
                throw new FaaSCacheConfigurationException(itemPath, Show(child), allowedItem);
            }

            given[itemPath] = child.Value;
            items.Add((index, child.Value ?? string.Empty));
        }

        items.Sort((a, b) => a.Index.CompareTo(b.Index));
        return items.ConvertAll(i => i.Value);
    }

    /// <summary><c>results.functions</c>: each function's object, its values parsed as the table's keys of the same kinds are.</summary>
    private static Dictionary<string, FunctionResultOptions> ReadResultFunctions(IConfigurationSection section, string path, Dictionary<string, string?> given)
    {
        if (!string.IsNullOrEmpty(section.Value) && !HasChildren(section))
        {
            throw new FaaSCacheConfigurationException(path, section.Value, R.AllowedResultFunctions);
        }

        var functions = new Dictionary<string, FunctionResultOptions>(StringComparer.OrdinalIgnoreCase);
        foreach (IConfigurationSection function in section.GetChildren())
        {
            var options = new FunctionResultOptions();
            string at = R.Join(path, function.Key);
            foreach ((string name, IConfigurationSection child, string childPath) in Members(function, at, [.. ResultFunctionKeys.Keys]))
            {
                HostJsonKey key = ResultFunctionKeys[name];
                object? value = key.Kind == HostJsonKind.Strings
                    ? ReadStringArray(child, childPath, given, key.Allowed, ResultKeyPart.Allowed)
                    : ReadValue(key, child, childPath, given);
                switch (name)
                {
                    case "key":
                        options.Key = (List<string>)value!;
                        break;
                    case "ttl":
                        options.Ttl = (TimeSpan)value!;
                        break;
                    case "maxBytes":
                        options.MaxBytes = (long)value!;
                        break;
                    case "location":
                        options.Location = (ResultLocation?)value;
                        break;
                    default:
                        options.SkipOutputs = (bool)value!;
                        break;
                }
            }

            functions[function.Key] = options;
        }

        return functions;
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

    private static HostJsonKey FunctionKey(string name, HostJsonKind kind, string allowed, bool nullable = false, IReadOnlyList<Enum>? names = null) => new()
    {
        Path = name,
        Kind = kind,
        Nullable = nullable,
        Allowed = allowed,
        Description = name,
        Names = names ?? [],
        Get = _ => null,
        Set = (_, _) => { },
    };
}
