namespace FaaSCache.Host.AppModel;

/// <summary>
/// One binding's JSON to a <see cref="BindingDefinition"/>, the same for function.json and a worker's raw bindings:
/// names, directions and data types are read case-insensitively (Python v2 writes <c>"IN"</c>/<c>"BINARY"</c>, .NET
/// <c>"In"</c>), and a blob path is <c>path</c> or <c>blobPath</c>. Every problem names where the binding came from.
/// </summary>
public static class BindingParser
{
    /// <summary>The binding types this host serves.</summary>
    public static readonly IReadOnlyList<string> SupportedTypes = ["httpTrigger", "http", "blob", "blobTrigger", "timerTrigger", "queueTrigger", "queue"];

    private static readonly JsonDocumentOptions JsonOptions = new() { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true };

    /// <summary>Parses one binding; <paramref name="source"/> names where it came from (a file, a function), for errors.</summary>
    public static BindingDefinition Parse(string source, int index, JsonNode? node, IReadOnlyDictionary<string, string> settings)
    {
        if (node is not JsonObject raw)
        {
            throw new AppLoadException($"{source}: binding {index} is not an object.");
        }

        string where = $"{source}: binding {index}";
        string type = StringProperty(source, raw, "type") ?? throw new AppLoadException($"{where} has no \"type\".");
        string name = StringProperty(source, raw, "name") ?? throw new AppLoadException($"{where} ({type}) has no \"name\".");
        where = $"{source}: binding '{name}' ({type})";
        if (name != "$return" && (name.Length == 0 || !char.IsAsciiLetter(name[0]) || name.Any(c => !(char.IsAsciiLetterOrDigit(c) || c == '_'))))
        {
            throw new AppLoadException($"{where}: the name must start with a letter and use letters, digits or '_' (or be \"$return\").");
        }

        string? directionText = StringProperty(source, raw, "direction");
        BindingDirection direction = directionText?.ToLowerInvariant() switch
        {
            "in" => BindingDirection.In,
            "out" => BindingDirection.Out,
            "inout" => BindingDirection.InOut,
            null when type.EndsWith("Trigger", StringComparison.OrdinalIgnoreCase) => BindingDirection.In,
            null => throw new AppLoadException($"{where} has no \"direction\" (in, out or inout)."),
            _ => throw new AppLoadException($"{where}: direction '{directionText}' is not one of in, out, inout."),
        };
        string? dataType = StringProperty(source, raw, "dataType");
        if (dataType is not null && dataType.ToLowerInvariant() is not ("string" or "binary" or "stream"))
        {
            throw new AppLoadException($"{where}: dataType '{dataType}' is not one of string, binary, stream.");
        }

        // %AppSetting% in a path or a queue name is the app setting's value, as the Functions host resolves it at indexing.
        foreach (string property in new[] { "path", "blobPath", "queueName" })
        {
            if (StringProperty(source, raw, property) is { } text && text.Contains('%', StringComparison.Ordinal))
            {
                raw[raw.First(p => string.Equals(p.Key, property, StringComparison.OrdinalIgnoreCase)).Key] = ResolveAppSettings(where, property, text, settings);
            }
        }

        var binding = new BindingDefinition
        {
            Name = name,
            Type = type,
            Direction = direction,
            DataType = dataType,
            Path = StringProperty(source, raw, "path") ?? StringProperty(source, raw, "blobPath"),
            Connection = StringProperty(source, raw, "connection"),
            Raw = raw,
        };
        if (binding.IsBlob)
        {
            ValidateBlobBinding(where, binding, settings);
        }

        return binding;
    }

    /// <summary>
    /// <paramref name="value"/> with each <c>%Name%</c> replaced by the app setting (local.settings.json's Values or the
    /// environment); a setting that is not set stops the function, naming it.
    /// </summary>
    private static string ResolveAppSettings(string where, string property, string value, IReadOnlyDictionary<string, string> settings)
    {
        var text = new System.Text.StringBuilder();
        int at = 0;
        while (at < value.Length)
        {
            int open = value.IndexOf('%', at);
            int close = open < 0 ? -1 : value.IndexOf('%', open + 1);
            if (close < 0)
            {
                text.Append(value, at, value.Length - at);
                break;
            }

            string setting = value[(open + 1)..close];
            string resolved = settings.TryGetValue(setting, out string? s) ? s
                : Environment.GetEnvironmentVariable(setting)
                ?? throw new AppLoadException($"{where}: {property} '{value}' names the app setting '%{setting}%', which is not set (local.settings.json \"Values\" or the environment).");
            text.Append(value, at, open - at).Append(resolved);
            at = close + 1;
        }

        return text.ToString();
    }

    /// <summary>
    /// Why a function cannot run here because of a binding type this host does not serve (null when it can): the Functions
    /// host puts such a function in error and runs the rest of the app, and so does this one.
    /// </summary>
    public static string? Unsupported(string source, IReadOnlyList<BindingDefinition> bindings)
    {
        ArgumentNullException.ThrowIfNull(bindings);
        List<BindingDefinition> unsupported = [.. bindings.Where(b => !SupportedTypes.Contains(b.Type, StringComparer.OrdinalIgnoreCase))];
        return unsupported.Count == 0
            ? null
            : $"{source}: {string.Join(", ", unsupported.Select(b => $"binding '{b.Name}' has type '{b.Type}'"))}, which this host does not serve (supported: {string.Join(", ", SupportedTypes)}); the function is left out, the rest of the app runs.";
    }

    /// <summary>
    /// Checks a function's bindings as a whole: exactly one trigger, unique names (case-insensitively), types this host
    /// serves. <paramref name="source"/> names the function for the message.
    /// </summary>
    public static void CheckFunction(string source, IReadOnlyList<BindingDefinition> bindings)
    {
        int triggers = bindings.Count(b => b.IsTrigger);
        if (triggers != 1)
        {
            throw new AppLoadException($"{source}: a function needs exactly one trigger binding (a type ending in 'Trigger'); found {triggers}.");
        }

        var duplicate = bindings.GroupBy(b => b.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new AppLoadException($"{source}: binding name '{duplicate.Key}' is used more than once.");
        }

        if (Unsupported(source, bindings) is { } why)
        {
            throw new AppLoadException(why);
        }

        foreach (BindingDefinition queue in bindings.Where(b => b.IsQueueTrigger || b.IsQueueOutput))
        {
            if (queue.QueueName is not { Length: > 0 } name)
            {
                throw new AppLoadException($"{source}: queue binding '{queue.Name}' has no \"queueName\" (the storage queue it {(queue.IsQueueTrigger ? "reads" : "writes")}, e.g. \"orders\").");
            }

            if (queue.IsQueueTrigger && name.Contains('{', StringComparison.Ordinal))
            {
                throw new AppLoadException($"{source}: queue trigger '{queue.Name}' names the queue '{name}' with a {{...}} expression; a trigger's queue must be a fixed name (or an %AppSetting%).");
            }
        }

        if (bindings.FirstOrDefault(b => b.IsTimerTrigger) is { } timer)
        {
            string schedule = timer.Property("schedule") ?? throw new AppLoadException($"{source}: timer trigger '{timer.Name}' has no \"schedule\" (an NCRONTAB expression such as \"0 */5 * * * *\").");
            try
            {
                _ = Triggers.TimerSchedule.Parse(schedule);
            }
            catch (FormatException e)
            {
                throw new AppLoadException($"{source}: timer trigger '{timer.Name}': {e.Message}", e);
            }
        }
    }

    /// <summary>Parses a JSON text holding one object; <paramref name="source"/> names it for errors.</summary>
    public static JsonObject ParseObject(string source, string json)
    {
        try
        {
            return JsonNode.Parse(json, documentOptions: JsonOptions) as JsonObject
                ?? throw new AppLoadException($"{source} must hold a JSON object.");
        }
        catch (JsonException e)
        {
            throw new AppLoadException($"{source} is not valid JSON: {e.Message}", e);
        }
    }

    /// <summary>A string property, its name compared case-insensitively; a value of another kind is an error naming it.</summary>
    public static string? StringProperty(string source, JsonObject json, string name)
    {
        JsonNode? node = json.FirstOrDefault(p => string.Equals(p.Key, name, StringComparison.OrdinalIgnoreCase)).Value;
        return node switch
        {
            null => null,
            JsonValue v when v.TryGetValue(out string? s) => s,
            _ => throw new AppLoadException($"{source}: \"{name}\" must be a string, not {node.GetValueKind()}."),
        };
    }

    private static void ValidateBlobBinding(string where, BindingDefinition binding, IReadOnlyDictionary<string, string> settings)
    {
        string path = binding.Path ?? throw new AppLoadException($"{where} has no \"path\" (container/blob, e.g. \"samples/{{name}}\").");
        int slash = path.IndexOf('/', StringComparison.Ordinal);
        if (slash <= 0 || slash == path.Length - 1)
        {
            throw new AppLoadException($"{where}: path '{path}' must be 'container/blob' (a container, '/', then the blob name or a pattern).");
        }

        string container = path[..slash];
        if (!container.Contains('{', StringComparison.Ordinal) &&
            (container.Length is < 3 or > 63 || container.Any(c => !(char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c == '-'))))
        {
            throw new AppLoadException($"{where}: container '{container}' in path '{path}' must be 3 to 63 lowercase letters, digits or '-'.");
        }

        string storage = FunctionAppLoader.StorageSetting;
        string connection = binding.Connection is { Length: > 0 } c ? c : storage;
        if (!settings.TryGetValue(connection, out string? value) && !settings.TryGetValue(connection + "__serviceUri", out value))
        {
            throw new AppLoadException($"{where}: connection setting '{connection}' is not set (local.settings.json \"Values\" or the environment).");
        }

        if (!string.Equals(value, settings.GetValueOrDefault(storage), StringComparison.Ordinal))
        {
            throw new AppLoadException($"{where}: connection '{connection}' names another storage account than '{storage}'; a FaaSCache app caches one account.");
        }

        try
        {
            _ = new Bindings.BindingTemplate(path);
        }
        catch (Exception e) when (e is FormatException or ArgumentException)
        {
            throw new AppLoadException($"{where}: path '{path}': {e.Message}", e);
        }
    }
}
