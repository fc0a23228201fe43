using System.Collections;

namespace FaaSCache.Host.AppModel;

/// <summary>
/// Loads a function app folder as Core Tools does: host.json, local.settings.json, the function.json folders (the legacy
/// models) and each language's worker.config.json; when the runtime's worker indexes functions itself (today's models:
/// Python v2, Node.js v4, C# isolated), the app is left for it to index once it runs (<see cref="FunctionApp.Indexed"/>).
/// Every problem stops the load with a message naming the file and what is wrong.
/// </summary>
public static class FunctionAppLoader
{
    /// <summary>The setting naming the storage account.</summary>
    public const string StorageSetting = "AzureWebJobsStorage";

    /// <summary>The setting naming the worker runtime.</summary>
    public const string RuntimeSetting = "FUNCTIONS_WORKER_RUNTIME";

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
        var functionErrors = new List<string>();
        foreach (string dir in Directory.EnumerateDirectories(root).Order(StringComparer.Ordinal))
        {
            string functionJson = Path.Combine(dir, "function.json");
            if (File.Exists(functionJson))
            {
                if (LoadFunction(functionJson, settings, workersDirectory, workers, out string? error) is { } function)
                {
                    functions.Add(function);
                }
                else
                {
                    functionErrors.Add(error!);
                }
            }
        }

        // Worker indexing, as the Functions host does it: the worker of FUNCTIONS_WORKER_RUNTIME is asked for the
        // functions when its worker.config.json says "workerIndexing"; it may decline (then the folders above count).
        string? runtime = settings.GetValueOrDefault(RuntimeSetting) is { Length: > 0 } r ? r.ToLowerInvariant() : null;
        runtime ??= functions.Count == 0 ? DetectRuntime(root) : null;
        string? indexing = null;
        if (runtime is not null)
        {
            if (!workers.TryGetValue(runtime, out WorkerDescription? worker))
            {
                worker = LoadWorkerFor(runtime, root, workersDirectory);
                if (worker.WorkerIndexing || functions.Count == 0)
                {
                    workers[worker.Language] = worker;
                }
            }

            indexing = worker.WorkerIndexing ? worker.Language : null;
        }

        if (functions.Count == 0 && indexing is null)
        {
            throw new AppLoadException(functionErrors.Count > 0
                ? $"No function of '{root}' can run here: {string.Join(" ", functionErrors)}"
                : NoFunctionsMessage(root, runtime, settings.ContainsKey(RuntimeSetting)));
        }

        return new FunctionApp
        {
            RootDirectory = root,
            Settings = settings,
            StorageConnection = storage,
            FolderFunctions = functions,
            FunctionErrors = functionErrors,
            Workers = workers,
            IndexingLanguage = indexing,
            RoutePrefix = RoutePrefixOf(hostJson),
        };
    }

    /// <summary>
    /// The message when an app declares no function either way. <paramref name="runtime"/> is the worker that was asked
    /// (or would have been); <paramref name="runtimeWasSet"/> says whether the app setting named it.
    /// </summary>
    public static string NoFunctionsMessage(string root, string? runtime, bool runtimeWasSet, string? workerSaid = null)
    {
        string indexed = runtime switch
        {
            null => $"no file of today's models either (Python v2: {PythonScript}; Node.js v4: package.json with \"main\"; C# isolated: the build output's worker.config.json), and the app setting '{RuntimeSetting}' is not set",
            _ when workerSaid is not null => $"and the {runtime} worker indexed none: {workerSaid.TrimEnd('.')}",
            _ => $"and the {runtime} worker{(runtimeWasSet ? $" ('{RuntimeSetting}' is '{runtime}')" : string.Empty)} does not index functions itself (its worker.config.json has no \"workerIndexing\": \"true\")",
        };
        return $"No functions found in '{root}'. An app declares them in one of two ways, and neither gave any: function.json folders (Python v1, Node.js v3: '<app>/<function>/function.json'), none here; or the worker's own index (Python v2 {PythonScript}, Node.js v4 @azure/functions 4.x, C# isolated), {indexed}.";
    }

    private const string PythonScript = "function_app.py";

    /// <summary>
    /// An app's name: its folder's, except for a C# isolated build output (bin/Release/net10.0 says nothing), which is
    /// named by its assembly, as its project is.
    /// </summary>
    public static string AppNameOf(string root)
    {
        string folder = Path.GetFileName(Path.TrimEndingDirectorySeparator(Path.GetFullPath(root)));
        try
        {
            string config = Path.Combine(root, "worker.config.json");
            if (File.Exists(config) && ParseObject(config)["description"] is JsonObject d
                && string.Equals(StringProperty(config, d, "language"), "dotnet-isolated", StringComparison.OrdinalIgnoreCase)
                && StringProperty(config, d, "defaultWorkerPath") is { Length: > 0 } dll)
            {
                return Path.GetFileNameWithoutExtension(dll);
            }
        }
        catch (AppLoadException)
        {
            // A malformed worker.config.json is reported when the app loads; the folder names it meanwhile.
        }

        return folder;
    }

    /// <summary>
    /// The runtime of an app with no function.json folder and no <c>FUNCTIONS_WORKER_RUNTIME</c>, from the files today's
    /// models put in the app folder; null when none is there.
    /// </summary>
    private static string? DetectRuntime(string root)
    {
        string dotnetConfig = Path.Combine(root, "worker.config.json");
        if (File.Exists(dotnetConfig) && ParseObject(dotnetConfig)["description"] is JsonObject d
            && string.Equals(StringProperty(dotnetConfig, d, "language"), "dotnet-isolated", StringComparison.OrdinalIgnoreCase))
        {
            return "dotnet-isolated";
        }

        string python = Environment.GetEnvironmentVariable("PYTHON_SCRIPT_FILE_NAME") is { Length: > 0 } named ? named : PythonScript;
        if (File.Exists(Path.Combine(root, python)))
        {
            return "python";
        }

        return File.Exists(Path.Combine(root, "package.json")) ? "node" : null;
    }

    /// <summary>
    /// The worker.config.json of a runtime: the workers folder's <c>&lt;language&gt;/</c> for python and node; the app's own
    /// folder for a C# isolated build output, which brings its worker with it.
    /// </summary>
    private static WorkerDescription LoadWorkerFor(string runtime, string root, string workersDirectory) => runtime switch
    {
        "python" or "node" => LoadWorkerConfig(Path.Combine(workersDirectory, runtime, "worker.config.json"), runtime),
        "dotnet-isolated" => LoadWorkerConfig(Path.Combine(root, "worker.config.json"), runtime),
        _ => throw new AppLoadException($"The app setting '{RuntimeSetting}' is '{runtime}'; this host runs python, node and dotnet-isolated."),
    };

    /// <summary>host.json's <c>extensions.http.routePrefix</c> (default <c>api</c>), without slashes.</summary>
    private static string RoutePrefixOf(string hostJson)
    {
        JsonObject json = ParseObject(hostJson);
        if (json["extensions"] is JsonObject extensions && extensions["http"] is JsonObject http && http["routePrefix"] is JsonNode prefix)
        {
            return prefix is JsonValue v && v.TryGetValue(out string? text)
                ? text.Trim('/')
                : throw new AppLoadException($"'{hostJson}': extensions.http.routePrefix must be a string (\"api\" by default, \"\" for none).");
        }

        return "api";
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

        // App settings are environment variables where an app runs (Azure, a container, a pod, whose image has no
        // local.settings.json): every variable is a setting, and wins over the file's value, as func start's do.
        foreach (DictionaryEntry e in environment)
        {
            if (e.Key is string key && e.Value is string value)
            {
                settings[key] = value;
            }
        }

        return settings;
    }

    private static FunctionDefinition? LoadFunction(string path, Dictionary<string, string> settings, string workersDirectory, Dictionary<string, WorkerDescription> workers, out string? error)
    {
        error = null;
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
            bindings.Add(BindingParser.Parse($"'{path}'", i, bindingArray[i], settings));
        }

        if (BindingParser.Unsupported($"Function '{name}' ('{path}')", bindings) is { } unsupported)
        {
            error = unsupported;
            return null;
        }

        BindingParser.CheckFunction($"'{path}'", bindings);
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
            WorkerIndexing = d.FirstOrDefault(p => string.Equals(p.Key, "workerIndexing", StringComparison.OrdinalIgnoreCase)).Value switch
            {
                null => false,
                JsonValue v when v.TryGetValue(out bool b) => b,
                JsonValue v when v.TryGetValue(out string? s) && bool.TryParse(s, out bool b) => b,
                JsonNode other => throw new AppLoadException($"'{path}': description.workerIndexing must be \"true\" or \"false\", not {other.ToJsonString()}."),
            },
        };
    }

    private static JsonObject ParseObject(string path) => BindingParser.ParseObject($"'{path}'", File.ReadAllText(path));

    private static string? StringProperty(string file, JsonObject json, string name) => BindingParser.StringProperty($"'{file}'", json, name);

    private static List<string> StringArray(string file, JsonObject json, string name) => json[name] switch
    {
        null => [],
        JsonArray a => a.Select(n => n is JsonValue v && v.TryGetValue(out string? s) ? s : throw new AppLoadException($"'{file}': \"{name}\" must be an array of strings.")).ToList(),
        _ => throw new AppLoadException($"'{file}': \"{name}\" must be an array of strings."),
    };
}
