using System.Text.Encodings.Web;
using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>Renders the effective <see cref="FaaSCacheOptions"/> as indented JSON for the start-up log.</summary>
public static class FaaSCacheOptionsFormatter
{
    /// <summary>
    /// The options as indented camelCase JSON in host.json's shape (every key of <see cref="HostJsonKeys.All"/>, in its
    /// order), enums by their host.json names, plus <c>effectivePersist</c> and <c>effectiveCapacityBytes</c> (what is in
    /// force when persist or capacity is unset). Every setting shown acts on something.
    /// </summary>
    /// <param name="o">The options.</param>
    /// <returns>The JSON text.</returns>
    public static string Format(FaaSCacheOptions o)
    {
        ArgumentNullException.ThrowIfNull(o);

        using var buffer = new MemoryStream();
        var writerOptions = new JsonWriterOptions { Indented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };
        using (var w = new Utf8JsonWriter(buffer, writerOptions))
        {
            w.WriteStartObject();
            string group = string.Empty;
            foreach (HostJsonKey key in HostJsonKeys.All)
            {
                if (key.Group != group)
                {
                    if (group.Length > 0)
                    {
                        w.WriteEndObject();
                    }

                    group = key.Group;
                    if (group.Length > 0)
                    {
                        w.WriteStartObject(group);
                    }
                }

                if (group.Length == 0 || HostJsonKeys.Groups[group](o) is not null)
                {
                    Write(w, key, key.Get(o));
                }

                if (key.Path == R.Persist)
                {
                    w.WriteString("effectivePersist", R.Name(o.EffectivePersist));
                }
                else if (key.Path == R.CapacityBytes)
                {
                    w.WriteNumber("effectiveCapacityBytes", o.EffectiveCapacityBytes);
                }
            }

            if (group.Length > 0)
            {
                w.WriteEndObject();
            }

            w.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length);
    }

    private static void Write(Utf8JsonWriter w, HostJsonKey key, object? value)
    {
        switch (value)
        {
            case null:
                w.WriteNull(key.Name);
                break;
            case bool b:
                w.WriteBoolean(key.Name, b);
                break;
            case int or long:
                w.WriteNumber(key.Name, Convert.ToInt64(value, CultureInfo.InvariantCulture));
                break;
            case double d:
                w.WriteNumber(key.Name, d);
                break;
            case IReadOnlyDictionary<string, FunctionResultOptions> functions:
                w.WriteStartObject(key.Name);
                foreach ((string name, FunctionResultOptions f) in functions)
                {
                    w.WriteStartObject(name);
                    w.WriteStartArray("key");
                    foreach (string part in f.Key ?? [])
                    {
                        w.WriteStringValue(part);
                    }

                    w.WriteEndArray();
                    w.WriteString("ttl", R.Format(f.Ttl));
                    w.WriteNumber("maxBytes", f.MaxBytes);
                    if (f.Location is { } location)
                    {
                        w.WriteString("location", R.Name(location));
                    }
                    else
                    {
                        w.WriteNull("location");
                    }

                    w.WriteBoolean("skipOutputs", f.SkipOutputs);
                    w.WriteEndObject();
                }

                w.WriteEndObject();
                break;
            case IEnumerable<string> items:
                w.WriteStartArray(key.Name);
                foreach (string item in items)
                {
                    w.WriteStringValue(item);
                }

                w.WriteEndArray();
                break;
            default:
                w.WriteString(key.Name, key.Format(value));
                break;
        }
    }
}
