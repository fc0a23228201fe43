using System.Collections;
using System.Text.Json;
using System.Text.Json.Nodes;
using FaaSCache.Options;

namespace FaaSCache.Host.AppModel;

/// <summary>
/// Loads a function app folder as Core Tools does: host.json, local.settings.json and one folder per
/// function with function.json; finds each language's worker.config.json. Every problem stops the
/// load with a message naming the file and what is wrong.
/// </summary>
public static class FunctionAppLoader
{
    /// <summary>The setting naming the storage account.</summary>
    public const string StorageSetting = "AzureWebJobsStorage";

    /// <summary>The setting naming the worker runtime.</summary>
    public const string RuntimeSetting = "FUNCTIONS_WORKER_RUNTIME";

    private static readonly JsonDocumentOptions JsonOptions = new() { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true };

    /// <summary>Loads the app in <paramref name="scriptRoot"/>, with workers from <paramref name="workersDirectory"/>.</summary>
    public static FunctionApp Load(string scriptRoot, string workersDirectory, IDictionary? environment = null)
    {
        string root = Path.GetFullPath(scriptRoot);
        if (!Directory.Exists(root))
        {
            throw new AppLoadException($"The function app folder '{root}' does not exist.");
        }

        string hostJson = Path.Combine(root, "host.json");
        if (!File.Exists(hostJson))
        {
            throw new AppLoadException($"'{hostJson}' not found: a function app folder needs a host.json (at least {{\"version\": \"2.0\"}}).");
        }

        try
        {
            // Checked here so that a bad host.json stops start-up naming the file, before anything listens; the
            // cachelet reads the same section from the host's configuration (one reader, one set of rules).
            _ = FaaSCacheOptionsReader.ReadHostJson(hostJson);
        }
        catch (FaaSCacheConfigurationException e)
        {
            throw new AppLoadException(e.Message, e);
        }

        Dictionary<string, string> settings = LoadSettings(Path.Combine(root, "local.settings.json"), environment ?? Environment.GetEnvironmentVariables());
        if (!settings.TryGetValue(StorageSetting, out string? storage) || string.IsNullOrWhiteSpace(storage))
        {
            throw new AppLoadException($"The app setting '{StorageSetting}' is not set: add it to '{Path.Combine(root, "local.settings.json")}' under \"Values\" (\"UseDevelopmentStorage=true\" for Azurite) or to the environment.");
        }

        var workers = new Dictionary<string, WorkerDescription>(StringComparer.OrdinalIgnoreCase);
        var functions = new List<FunctionDefinition>();
        foreach (string dir in Directory.EnumerateDirectories(root).Order(StringComparer.Ordinal))
        {
            string functionJson = Path.Combine(dir, "function.json");
            if (File.Exists(functionJson))
            {
                functions.Add(LoadFunction(functionJson, settings, workersDirectory, workers));
            }
        }

        if (functions.Count == 0)
        {
            throw new AppLoadException($"No functions found in '{root}': each function is a folder holding a function.json.");
        }

        return new FunctionApp
        {
            RootDirectory = root,
            Settings = settings,
            StorageConnection = storage,
            Functions = functions,
            Workers = workers,
        };
    }

    /// <summary>local.settings.json's Values (optional file), then the environment on top, as Core Tools does.</summary>
    private static Dictionary<string, string> LoadSettings(string path, IDictionary environment)
    {
        var settings = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        if (File.Exists(path))
        {
            JsonObject file = ParseObject(path);
            if (file["IsEncrypted"] is JsonValue encrypted && encrypted.TryGetValue(out bool isEncrypted) && isEncrypted)
            {
                throw new AppLoadException($"'{path}': \"IsEncrypted\" is true; encrypted settings are not supported locally, set it to false.");
            }

            if (file["Values"] is JsonNode values)
            {
                if (values is not JsonObject valueObject)
                {
                    throw new AppLoadException($"'{path}': \"Values\" must be an object of setting names to strings.");
                }

                foreach ((string name, JsonNode? value) in valueObject)
                {
                    settings[name] = value switch
                    {
                        JsonValue v when v.TryGetValue(out string? s) => s,
                        JsonValue v => v.ToJsonString(),
                        null => string.Empty,
                        _ => throw new AppLoadException($"'{path}': setting \"{name}\" must be a string, not {value.GetValueKind()}."),
                    };
                }
            }
        }

        foreach (DictionaryEntry e in environment)
        {
            if (e.Key is string key && e.Value is string value && (settings.ContainsKey(key) || key is StorageSetting or RuntimeSetting))
            {
                settings[key] = value;
            }
        }

        return settings;
    }

    private static FunctionDefinition LoadFunction(string path, Dictionary<string, string> settings, string workersDirectory, Dictionary<string, WorkerDescription> workers)
    {
        string dir = Path.GetDirectoryName(path)!;
        string name = Path.GetFileName(dir);
        JsonObject json = ParseObject(path);
        if (json["bindings"] is not JsonArray bindingArray)
        {
            throw new AppLoadException($"'{path}': \"bindings\" is missing or not an array.");
        }

        var bindings = new List<BindingDefinition>();
        for (int i = 0; i < bindingArray.Count; i++)
        {
            bindings.Add(ParseBinding(path, i, bindingArray[i], settings));
        }

        int triggers = bindings.Count(b => b.IsTrigger);
        if (triggers != 1)
        {
            throw new AppLoadException($"'{path}': a function needs exactly one trigger binding (a type ending in 'Trigger'); found {triggers}.");
        }

        var duplicate = bindings.GroupBy(b => b.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new AppLoadException($"'{path}': binding name '{duplicate.Key}' is used more than once.");
        }

        string? runtime = settings.GetValueOrDefault(RuntimeSetting);
        string? scriptFile = StringProperty(path, json, "scriptFile");
        scriptFile ??= runtime?.ToLowerInvariant() switch
        {
            "python" => "__init__.py",
            "node" => "index.js",
            _ => throw new AppLoadException($"'{path}': \"scriptFile\" is missing and the app setting '{RuntimeSetting}' does not name a runtime with a default (python, node)."),
        };
        string script = Path.GetFullPath(Path.Combine(dir, scriptFile));
        if (!File.Exists(script))
        {
            throw new AppLoadException($"'{path}': scriptFile '{scriptFile}' does not exist ({script}).");
        }

        WorkerDescription worker = FindWorker(path, script, runtime, workersDirectory, workers);
        return new FunctionDefinition
        {
            Name = name,
            Directory = dir,
            ScriptFile = script,
            EntryPoint = StringProperty(path, json, "entryPoint") ?? string.Empty,
            Language = worker.Language,
            Bindings = bindings,
        };
    }

    private static BindingDefinition ParseBinding(string path, int index, JsonNode? node, Dictionary<string, string> settings)
    {
        if (node is not JsonObject raw)
        {
            throw new AppLoadException($"'{path}': binding {index} is not an object.");
        }

        string where = $"'{path}': binding {index}";
        string type = StringProperty(path, raw, "type") ?? throw new AppLoadException($"{where} has no \"type\".");
        string name = StringProperty(path, raw, "name") ?? throw new AppLoadException($"{where} ({type}) has no \"name\".");
        where = $"'{path}': binding '{name}' ({type})";
        if (name != "$return" && (name.Length == 0 || !char.IsAsciiLetter(name[0]) || name.Any(c => !(char.IsAsciiLetterOrDigit(c) || c == '_'))))
        {
            throw new AppLoadException($"{where}: the name must start with a letter and use letters, digits or '_' (or be \"$return\").");
        }

        string? directionText = StringProperty(path, raw, "direction");
        BindingDirection direction = directionText?.ToLowerInvariant() switch
        {
            "in" => BindingDirection.In,
            "out" => BindingDirection.Out,
            "inout" => BindingDirection.InOut,
            null when type.EndsWith("Trigger", StringComparison.OrdinalIgnoreCase) => BindingDirection.In,
            null => throw new AppLoadException($"{where} has no \"direction\" (in, out or inout)."),
            _ => throw new AppLoadException($"{where}: direction '{directionText}' is not one of in, out, inout."),
        };
        string? dataType = StringProperty(path, raw, "dataType");
        if (dataType is not null && dataType.ToLowerInvariant() is not ("string" or "binary" or "stream"))
        {
            throw new AppLoadException($"{where}: dataType '{dataType}' is not one of string, binary, stream.");
        }

        var binding = new BindingDefinition
        {
            Name = name,
            Type = type,
            Direction = direction,
            DataType = dataType,
            Path = StringProperty(path, raw, "path"),
            Connection = StringProperty(path, raw, "connection"),
            Raw = raw,
        };
        if (binding.IsBlob)
        {
            ValidateBlobBinding(where, binding, settings);
        }

        return binding;
    }

    private static void ValidateBlobBinding(string where, BindingDefinition binding, Dictionary<string, string> settings)
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

        string connection = binding.Connection is { Length: > 0 } c ? c : StorageSetting;
        if (!settings.TryGetValue(connection, out string? value) && !settings.TryGetValue(connection + "__serviceUri", out value))
        {
            throw new AppLoadException($"{where}: connection setting '{connection}' is not set (local.settings.json \"Values\" or the environment).");
        }

        if (!string.Equals(value, settings.GetValueOrDefault(StorageSetting), StringComparison.Ordinal))
        {
            throw new AppLoadException($"{where}: connection '{connection}' names another storage account than '{StorageSetting}'; a FaaSCache app caches one account.");
        }
    }

    private static WorkerDescription FindWorker(string functionJson, string script, string? runtime, string workersDirectory, Dictionary<string, WorkerDescription> workers)
    {
        string extension = Path.GetExtension(script);
        WorkerDescription? known = workers.Values.FirstOrDefault(w => w.Extensions.Contains(extension, StringComparer.OrdinalIgnoreCase));
        if (known is not null)
        {
            return known;
        }

        string language = runtime?.ToLowerInvariant() switch
        {
            { } r when r is "python" or "node" && LanguageOf(extension) == r => r,
            _ => LanguageOf(extension) ?? throw new AppLoadException($"'{functionJson}': no worker runs '{extension}' scripts (python: .py, node: .js/.mjs/.cjs)."),
        };
        if (runtime is { Length: > 0 } && !string.Equals(runtime, language, StringComparison.OrdinalIgnoreCase))
        {
            throw new AppLoadException($"'{functionJson}': the script '{Path.GetFileName(script)}' is {language}, but the app setting '{RuntimeSetting}' is '{runtime}'.");
        }

        WorkerDescription worker = LoadWorkerConfig(Path.Combine(workersDirectory, language, "worker.config.json"), language);
        workers[language] = worker;
        return worker;
    }

    private static string? LanguageOf(string extension) => extension.ToLowerInvariant() switch
    {
        ".py" => "python",
        ".js" or ".mjs" or ".cjs" => "node",
        _ => null,
    };

    /// <summary>Reads a worker.config.json.</summary>
    public static WorkerDescription LoadWorkerConfig(string path, string language)
    {
        if (!File.Exists(path))
        {
            throw new AppLoadException($"'{path}' not found: the {language} worker needs a worker.config.json (set --workers-dir to the folder holding '{language}/worker.config.json').");
        }

        JsonObject json = ParseObject(path);
        if (json["description"] is not JsonObject d)
        {
            throw new AppLoadException($"'{path}': \"description\" is missing or not an object.");
        }

        string dir = Path.GetDirectoryName(Path.GetFullPath(path))!;
        string exe = StringProperty(path, d, "defaultExecutablePath") ?? throw new AppLoadException($"'{path}': description.defaultExecutablePath is missing.");
        string workerPath = StringProperty(path, d, "defaultWorkerPath") ?? throw new AppLoadException($"'{path}': description.defaultWorkerPath is missing.");
        string resolved = Path.GetFullPath(Path.Combine(dir, workerPath));
        if (!File.Exists(resolved))
        {
            throw new AppLoadException($"'{path}': defaultWorkerPath '{workerPath}' does not exist ({resolved}).");
        }

        return new WorkerDescription
        {
            Language = StringProperty(path, d, "language") ?? language,
            WorkerDirectory = dir,
            Extensions = StringArray(path, d, "extensions"),
            DefaultExecutablePath = exe.Contains('/', StringComparison.Ordinal) && !Path.IsPathRooted(exe) ? Path.GetFullPath(Path.Combine(dir, exe)) : exe,
            DefaultWorkerPath = resolved,
            Arguments = StringArray(path, d, "arguments"),
            WorkerArguments = StringArray(path, d, "workerArguments"),
        };
    }

    private static JsonObject ParseObject(string path)
    {
        try
        {
            return JsonNode.Parse(File.ReadAllText(path), documentOptions: JsonOptions) as JsonObject
                ?? throw new AppLoadException($"'{path}' must hold a JSON object.");
        }
        catch (JsonException e)
        {
            throw new AppLoadException($"'{path}' is not valid JSON: {e.Message}", e);
        }
    }

    private static string? StringProperty(string file, JsonObject json, string name)
    {
        JsonNode? node = json.FirstOrDefault(p => string.Equals(p.Key, name, StringComparison.OrdinalIgnoreCase)).Value;
        return node switch
        {
            null => null,
            JsonValue v when v.TryGetValue(out string? s) => s,
            _ => throw new AppLoadException($"'{file}': \"{name}\" must be a string, not {node.GetValueKind()}."),
        };
    }

    private static List<string> StringArray(string file, JsonObject json, string name) => json[name] switch
    {
        null => [],
        JsonArray a => a.Select(n => n is JsonValue v && v.TryGetValue(out string? s) ? s : throw new AppLoadException($"'{file}': \"{name}\" must be an array of strings.")).ToList(),
        _ => throw new AppLoadException($"'{file}': \"{name}\" must be an array of strings."),
    };
}
