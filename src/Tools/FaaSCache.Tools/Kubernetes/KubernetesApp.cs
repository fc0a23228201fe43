using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// What an app folder says that its Kubernetes objects need: its name, its worker runtime, its settings (local.settings.json's
/// Values, as <c>func kubernetes deploy</c> takes them) and its cache capacity (host.json, read by the host's own reader).
/// </summary>
public sealed partial class KubernetesApp
{
    /// <summary>Gets the app folder.</summary>
    public required string Root { get; init; }

    /// <summary>Gets the app name (a DNS label).</summary>
    public required string Name { get; init; }

    /// <summary>Gets the worker runtime (<c>FUNCTIONS_WORKER_RUNTIME</c>): python, node or dotnet-isolated.</summary>
    public required string Runtime { get; init; }

    /// <summary>Gets the app settings the pods get from the settings Secret, in local.settings.json's order (the runtime not among them).</summary>
    public required IReadOnlyList<KeyValuePair<string, string>> Settings { get; init; }

    /// <summary>Gets where AzureWebJobsStorage came from (--storage or local.settings.json), for messages.</summary>
    public required string StorageSource { get; init; }

    /// <summary>Gets host.json's <c>extensions.faasCache.capacityBytes</c>; null when unset (the host then derives it from its memory).</summary>
    public long? CapacityBytes { get; init; }

    /// <summary>
    /// Reads the app in <paramref name="scriptRoot"/>; throws <see cref="CommandLineException"/> naming the file or setting
    /// that is wrong. <paramref name="appName"/> overrides the name; <paramref name="storage"/> the app's AzureWebJobsStorage.
    /// </summary>
    public static KubernetesApp Read(string scriptRoot, string? appName, string? storage)
    {
        string root = Path.GetFullPath(scriptRoot);
        string hostJson = Path.Combine(root, "host.json");
        if (!File.Exists(hostJson))
        {
            throw new CommandLineException(Directory.Exists(root)
                ? $"'{root}' is not a function app folder: it has no host.json (pass --script-root <the app's folder>)."
                : $"The function app folder '{root}' does not exist (pass --script-root <the app's folder>).");
        }

        FaaSCacheOptions cache;
        try
        {
            cache = FaaSCacheOptionsReader.ReadHostJson(hostJson);
        }
        catch (FaaSCacheConfigurationException e)
        {
            throw new CommandLineException(e.Message, e);
        }

        string settingsFile = Path.Combine(root, "local.settings.json");
        List<KeyValuePair<string, string>> settings = ReadValues(settingsFile);
        string? runtime = settings.FirstOrDefault(s => string.Equals(s.Key, FunctionAppLoader.RuntimeSetting, StringComparison.OrdinalIgnoreCase)).Value;
        settings.RemoveAll(s => string.Equals(s.Key, FunctionAppLoader.RuntimeSetting, StringComparison.OrdinalIgnoreCase));
        if (storage is not null)
        {
            int at = settings.FindIndex(s => s.Key == FunctionAppLoader.StorageSetting);
            settings.RemoveAll(s => s.Key == FunctionAppLoader.StorageSetting);
            settings.Insert(at < 0 ? 0 : at, new(FunctionAppLoader.StorageSetting, storage));
        }
        else if (!settings.Any(s => s.Key == FunctionAppLoader.StorageSetting))
        {
            // The host needs it: the Secret must have it even when local.settings.json does not (it is then an error,
            // unless the Secrets are left out for the user to create).
            settings.Insert(0, new(FunctionAppLoader.StorageSetting, string.Empty));
        }

        foreach ((string name, _) in settings)
        {
            if (!SettingName().IsMatch(name))
            {
                throw new CommandLineException(
                    $"'{settingsFile}': the setting '{name}' cannot be a Kubernetes Secret key and environment variable name (letters, digits, '_', '-' and '.', not starting with a digit)"
                    + (name.Contains(':', StringComparison.Ordinal) ? ": write ':' as '__', which the Functions host reads the same." : "."));
            }
        }

        string resolvedName = appName ?? KubernetesManifestOptions.ToAppName(FunctionAppLoader.AppNameOf(root))
            ?? throw new CommandLineException($"The folder name of '{root}' has no letter or digit to name the app after: pass --app-name.");
        return new KubernetesApp
        {
            Root = root,
            Name = resolvedName,
            Runtime = RuntimeOf(root, runtime),
            Settings = settings,
            StorageSource = storage is not null ? "--storage" : $"'{settingsFile}'",
            CapacityBytes = cache.CapacityBytes,
        };
    }

    /// <summary>
    /// The runtime: the app setting's, else what the folder holds, by the rules the host and <c>faascache start</c> follow
    /// (a C# project or a C# isolated build output; function.json folders by their scripts; function_app.py; package.json).
    /// </summary>
    private static string RuntimeOf(string root, string? setting)
    {
        string? runtime = setting is { Length: > 0 } ? setting.ToLowerInvariant() : null;
        runtime ??= StartAppCommand.FindProject(root) is not null ? "dotnet-isolated" : null;
        runtime ??= FolderFunctionsRuntime(root);
        runtime ??= IsDotnetIsolatedBuildOutput(root) ? "dotnet-isolated" : null;
        runtime ??= File.Exists(Path.Combine(root, "function_app.py")) ? "python" : null;
        runtime ??= File.Exists(Path.Combine(root, "package.json")) ? "node" : null;
        return runtime switch
        {
            "python" or "node" or "dotnet-isolated" => runtime,
            null => throw new CommandLineException(FunctionAppLoader.NoFunctionsMessage(root, null, runtimeWasSet: false) + $" Set {FunctionAppLoader.RuntimeSetting} in local.settings.json."),
            _ => throw new CommandLineException($"The app setting '{FunctionAppLoader.RuntimeSetting}' is '{setting}'; the FaaSCache host runs python, node and dotnet-isolated."),
        };
    }

    // A C# isolated build output brings its worker.config.json, language dotnet-isolated.
    private static bool IsDotnetIsolatedBuildOutput(string root)
    {
        string config = Path.Combine(root, "worker.config.json");
        try
        {
            return File.Exists(config) && JsonNode.Parse(File.ReadAllText(config))?["description"]?["language"]?.GetValue<string>() is { } language
                && string.Equals(language, "dotnet-isolated", StringComparison.OrdinalIgnoreCase);
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException)
        {
            throw new CommandLineException($"'{config}' is not valid: {e.Message}", e);
        }
    }

    // Python v1 and Node.js v3 apps: a folder per function with its function.json, the script's extension naming the language.
    private static string? FolderFunctionsRuntime(string root)
    {
        foreach (string functionJson in Directory.EnumerateDirectories(root).Order(StringComparer.Ordinal).Select(d => Path.Combine(d, "function.json")).Where(File.Exists))
        {
            string? script = null;
            try
            {
                script = JsonNode.Parse(File.ReadAllText(functionJson))?["scriptFile"]?.GetValue<string>();
            }
            catch (Exception e) when (e is JsonException or InvalidOperationException or FormatException)
            {
                throw new CommandLineException($"'{functionJson}' is not valid: {e.Message}", e);
            }

            string folder = Path.GetDirectoryName(functionJson)!;
            script ??= File.Exists(Path.Combine(folder, "__init__.py")) ? "__init__.py" : File.Exists(Path.Combine(folder, "index.js")) ? "index.js" : null;
            switch (Path.GetExtension(script ?? string.Empty).ToLowerInvariant())
            {
                case ".py":
                    return "python";
                case ".js" or ".mjs" or ".cjs":
                    return "node";
            }
        }

        return null;
    }

    /// <summary>local.settings.json's Values in the file's order (none when there is no file), as the host reads them.</summary>
    private static List<KeyValuePair<string, string>> ReadValues(string path)
    {
        var values = new List<KeyValuePair<string, string>>();
        if (!File.Exists(path))
        {
            return values;
        }

        JsonObject file;
        try
        {
            file = JsonNode.Parse(File.ReadAllText(path), documentOptions: new JsonDocumentOptions { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true }) as JsonObject
                ?? throw new CommandLineException($"'{path}' must hold a JSON object.");
        }
        catch (JsonException e)
        {
            throw new CommandLineException($"'{path}' is not valid JSON: {e.Message}", e);
        }

        if (file["IsEncrypted"] is JsonValue encrypted && encrypted.TryGetValue(out bool isEncrypted) && isEncrypted)
        {
            throw new CommandLineException($"'{path}': \"IsEncrypted\" is true; decrypt it (func settings decrypt) first.");
        }

        switch (file["Values"])
        {
            case null:
                return values;
            case JsonObject settings:
                foreach ((string name, JsonNode? value) in settings)
                {
                    values.Add(new(name, value switch
                    {
                        JsonValue v when v.TryGetValue(out string? s) => s,
                        JsonValue v => v.ToJsonString(),
                        null => string.Empty,
                        _ => throw new CommandLineException($"'{path}': setting \"{name}\" must be a string, not {value.GetValueKind()}."),
                    }));
                }

                return values;
            default:
                throw new CommandLineException($"'{path}': \"Values\" must be an object of setting names to strings.");
        }
    }

    // A name both a Secret key ([-._a-zA-Z0-9]+) and an environment variable of the kubelet's classic rule can be.
    [GeneratedRegex("^[-._a-zA-Z][-._a-zA-Z0-9]*$", RegexOptions.CultureInvariant)]
    private static partial Regex SettingName();
}
