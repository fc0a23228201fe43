using System.Text.Json.Nodes;

namespace FaaSCache.Benchmarks;

/// <summary>Copies an app under <c>benchmarks/apps/</c> to a temporary folder (deleted on dispose), optionally with its host.json changed.</summary>
internal static class BenchAppFolder
{
    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true };

    /// <summary>
    /// Copies <c>benchmarks/apps/&lt;name&gt;</c> (without __pycache__ / node_modules); <paramref name="editHostJson"/>,
    /// when given, edits the parsed host.json before it is written.
    /// </summary>
    public static FunctionAppFolder Copy(string name, Action<JsonObject>? editHostJson = null, string? namePrefix = null) =>
        CopyDirectory(Path.Combine(RepositoryRoot.Find(), "benchmarks", "apps", name), editHostJson, namePrefix ?? $"faascache-bench-app-{name}");

    /// <summary>Copies the app in <paramref name="source"/> (e.g. a sample), as <see cref="Copy"/> does.</summary>
    public static FunctionAppFolder CopyDirectory(string source, Action<JsonObject>? editHostJson, string namePrefix)
    {
        if (!Directory.Exists(source))
        {
            throw new DirectoryNotFoundException($"The bench app '{source}' is missing.");
        }

        var builder = new FunctionAppBuilder { NamePrefix = namePrefix };
        string modules = Path.Combine(source, "node_modules");
        if (Directory.Exists(modules))
        {
            // A Node.js v4 app's own dependencies (npm ci by the set-up): linked, not copied, as the app would find them.
            builder.WithSymbolicLink("node_modules", modules);
        }

        foreach (string file in Directory.EnumerateFiles(source, "*", SearchOption.AllDirectories))
        {
            string relative = Path.GetRelativePath(source, file);
            if (relative.Split(Path.DirectorySeparatorChar).Any(part => part is "__pycache__" or "node_modules"))
            {
                continue;
            }

            string text = File.ReadAllText(file);
            _ = relative switch
            {
                "host.json" => builder.WithHostJson(editHostJson is null ? text : Edit(text, editHostJson)),
                "local.settings.json" => builder.WithLocalSettingsJson(text),
                _ => builder.WithFile(relative, text),
            };
        }

        return builder.Build();
    }

    /// <summary>Sets <c>extensions.faasCache.&lt;key&gt;</c> (creating the objects on the way).</summary>
    public static void SetFaaSCache(JsonObject hostJson, string key, JsonNode? value)
    {
        JsonObject extensions = hostJson["extensions"] as JsonObject ?? (JsonObject)(hostJson["extensions"] = new JsonObject());
        JsonObject faasCache = extensions["faasCache"] as JsonObject ?? (JsonObject)(extensions["faasCache"] = new JsonObject());
        faasCache[key] = value;
    }

    private static string Edit(string text, Action<JsonObject> edit)
    {
        JsonObject json = JsonNode.Parse(text) as JsonObject ?? throw new InvalidDataException("host.json is not a JSON object.");
        edit(json);
        return json.ToJsonString(Indented);
    }
}
