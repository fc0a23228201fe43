using System.Text.Json.Nodes;

namespace FaaSCache.Testing;

/// <summary>
/// Writes a function app folder (host.json, local.settings.json, one folder per function) into a fresh
/// temporary directory, so tests define their apps inline. <see cref="Build"/> returns the folder,
/// which is deleted on dispose (or when the test process exits).
/// <code>
/// using FunctionAppFolder app = new FunctionAppBuilder()
///     .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true")
///     .WithFunction("Hello", """{"bindings": [...]}""", ("__init__.py", "def main(req): ..."))
///     .Build();
/// </code>
/// </summary>
public sealed class FunctionAppBuilder
{
    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true };

    private readonly Dictionary<string, string> _settings = new(StringComparer.Ordinal);
    private readonly List<(string RelativePath, string Content)> _files = [];
    private readonly List<(string RelativePath, string Target)> _links = [];
    private string _hostJson = """{ "version": "2.0" }""";
    private string? _rawLocalSettings;
    private bool _writeLocalSettings = true;

    /// <summary>Gets the prefix of the temporary folder's name (the app's name starts with it).</summary>
    public string NamePrefix { get; init; } = "faascache-app";

    /// <summary>Replaces host.json (default <c>{"version": "2.0"}</c>); any text, valid JSON or not.</summary>
    public FunctionAppBuilder WithHostJson(string json)
    {
        _hostJson = json;
        return this;
    }

    /// <summary>Adds a setting to local.settings.json's <c>Values</c>.</summary>
    public FunctionAppBuilder WithSetting(string name, string value)
    {
        _settings[name] = value;
        return this;
    }

    /// <summary>
    /// Adds a symbolic link <paramref name="relativePath"/> to <paramref name="target"/> (e.g. a Node.js app's
    /// node_modules installed elsewhere); deleting the app removes the link, never what it points to.
    /// </summary>
    public FunctionAppBuilder WithSymbolicLink(string relativePath, string target)
    {
        _links.Add((relativePath, target));
        return this;
    }

    /// <summary>Removes a setting added before.</summary>
    public FunctionAppBuilder WithoutSetting(string name)
    {
        _settings.Remove(name);
        return this;
    }

    /// <summary>Writes local.settings.json with exactly this text (valid JSON or not), ignoring <see cref="WithSetting"/>.</summary>
    public FunctionAppBuilder WithLocalSettingsJson(string text)
    {
        _rawLocalSettings = text;
        _writeLocalSettings = true;
        return this;
    }

    /// <summary>Writes no local.settings.json at all.</summary>
    public FunctionAppBuilder WithoutLocalSettings()
    {
        _writeLocalSettings = false;
        return this;
    }

    /// <summary>Adds a function folder <paramref name="name"/> with its function.json and script files.</summary>
    public FunctionAppBuilder WithFunction(string name, string functionJson, params (string FileName, string Content)[] scripts)
    {
        _files.Add(($"{name}/function.json", functionJson));
        foreach ((string fileName, string content) in scripts)
        {
            _files.Add(($"{name}/{fileName}", content));
        }

        return this;
    }

    /// <summary>Adds any file, by path relative to the app folder (folders are created).</summary>
    public FunctionAppBuilder WithFile(string relativePath, string content)
    {
        _files.Add((relativePath, content));
        return this;
    }

    /// <summary>Writes the app into a new temporary folder.</summary>
    public FunctionAppFolder Build()
    {
        var directory = new OwnedDirectory(Path.GetTempPath(), NamePrefix);
        try
        {
            File.WriteAllText(Path.Combine(directory.Path, "host.json"), _hostJson);
            if (_writeLocalSettings)
            {
                File.WriteAllText(Path.Combine(directory.Path, "local.settings.json"), _rawLocalSettings ?? LocalSettingsJson());
            }

            foreach ((string relativePath, string content) in _files)
            {
                string full = Path.GetFullPath(Path.Combine(directory.Path, relativePath));
                if (!full.StartsWith(directory.Path + Path.DirectorySeparatorChar, StringComparison.Ordinal))
                {
                    throw new ArgumentException($"'{relativePath}' is outside the app folder.", nameof(relativePath));
                }

                Directory.CreateDirectory(Path.GetDirectoryName(full)!);
                File.WriteAllText(full, content);
            }

            foreach ((string relativePath, string target) in _links)
            {
                Directory.CreateSymbolicLink(Path.Combine(directory.Path, relativePath), target);
            }

            return new FunctionAppFolder(directory);
        }
        catch
        {
            directory.Dispose();
            throw;
        }
    }

    private string LocalSettingsJson()
    {
        var values = new JsonObject();
        foreach ((string name, string value) in _settings.OrderBy(s => s.Key, StringComparer.Ordinal))
        {
            values[name] = value;
        }

        return new JsonObject { ["IsEncrypted"] = false, ["Values"] = values }.ToJsonString(Indented);
    }
}

/// <summary>A function app folder written by <see cref="FunctionAppBuilder"/>; deleted on dispose.</summary>
public sealed class FunctionAppFolder : IDisposable
{
    private readonly OwnedDirectory _directory;

    internal FunctionAppFolder(OwnedDirectory directory) => _directory = directory;

    /// <summary>Gets the app folder (the script root).</summary>
    public string Path => _directory.Path;

    /// <summary>Gets host.json's full path.</summary>
    public string HostJsonPath => System.IO.Path.Combine(Path, "host.json");

    /// <summary>Gets local.settings.json's full path.</summary>
    public string LocalSettingsPath => System.IO.Path.Combine(Path, "local.settings.json");

    /// <summary>Gets the full path of function <paramref name="function"/>'s function.json.</summary>
    public string FunctionJsonPath(string function) => System.IO.Path.Combine(Path, function, "function.json");

    /// <summary>Gets the full path of a file in the app folder.</summary>
    public string FilePath(string relativePath) => System.IO.Path.Combine(Path, relativePath);

    public override string ToString() => Path;

    public void Dispose() => _directory.Dispose();
}
