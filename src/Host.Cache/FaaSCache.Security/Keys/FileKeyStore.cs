using System.Text.Json;
using System.Text.Json.Nodes;

namespace FaaSCache.Security.Keys;

/// <summary>
/// The Functions host's file repository (<c>AzureWebJobsSecretStorageType=files</c>): <c>host.json</c> (masterKey,
/// functionKeys, systemKeys) and <c>&lt;function&gt;.json</c> (keys) in one folder, made on first use with new keys, the
/// folder 0700 and the files 0600. Files are read again when they change, so a key added by hand takes effect.
/// </summary>
public sealed class FileKeyStore : IKeyStore
{
    private readonly string _directory;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, (DateTime Written, object Value)> _cache = new(StringComparer.Ordinal);

    /// <summary>Initializes a new instance of the <see cref="FileKeyStore"/> class over <paramref name="directory"/>.</summary>
    public FileKeyStore(string directory)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(directory);
        _directory = Path.GetFullPath(directory);
    }

    /// <inheritdoc />
    public string Description => $"files in {_directory}";

    /// <inheritdoc />
    public HostKeys GetHostKeys() => Read("host.json", ParseHost, () => new JsonObject
    {
        ["masterKey"] = Key("master"),
        ["functionKeys"] = new JsonArray(Key("default")),
        ["systemKeys"] = new JsonArray(),
        ["source"] = "runtime",
        ["decryptionKeyId"] = "",
    });

    /// <inheritdoc />
    public string? EnsureSystemKey(string name)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        if (GetHostKeys().SystemKeys.TryGetValue(name, out string? existing))
        {
            return existing;
        }

        // As the Functions host does when an extension registers its webhook: a new system key in host.json.
        string path = Path.Combine(_directory, "host.json");
        lock (_gate)
        {
            JsonObject json = JsonNode.Parse(File.ReadAllText(path))!.AsObject();
            JsonArray system = json["systemKeys"] as JsonArray ?? [];
            json["systemKeys"] = system;
            JsonObject key = Key(name);
            system.Add(key);
            string temporary = path + ".tmp";
            File.Delete(temporary);
            Write(temporary, json);
            File.Move(temporary, path, overwrite: true);
            _cache.Remove("host.json");
            return key["value"]!.GetValue<string>();
        }
    }

    /// <inheritdoc />
    public IReadOnlyDictionary<string, string> GetFunctionKeys(string functionName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(functionName);
        string name = functionName.ToLowerInvariant();
        if (name.IndexOfAny(['/', '\\', '\0']) >= 0 || name is "." or ".." or "host")
        {
            throw new ArgumentException($"Function name '{functionName}' cannot name a key file.", nameof(functionName));
        }

        return Read(name + ".json", ParseFunction, () => new JsonObject
        {
            ["keys"] = new JsonArray(Key("default")),
            ["source"] = "runtime",
            ["decryptionKeyId"] = "",
        });
    }

    private static JsonObject Key(string name) => new() { ["name"] = name, ["value"] = KeyGenerator.NewKey(), ["encrypted"] = false };

    private T Read<T>(string fileName, Func<JsonNode, string, T> parse, Func<JsonObject> create)
        where T : class
    {
        string path = Path.Combine(_directory, fileName);
        lock (_gate)
        {
            DateTime written = File.Exists(path) ? File.GetLastWriteTimeUtc(path) : DateTime.MinValue;
            if (_cache.TryGetValue(fileName, out var cached) && cached.Written == written && written != DateTime.MinValue)
            {
                return (T)cached.Value;
            }

            if (written == DateTime.MinValue)
            {
                Write(path, create());
                written = File.GetLastWriteTimeUtc(path);
            }

            JsonNode node;
            try
            {
                node = JsonNode.Parse(File.ReadAllText(path)) ?? throw new JsonException("the file is empty");
            }
            catch (JsonException e)
            {
                throw new KeyStoreException($"The key file {path} is not JSON ({e.Message}); fix it or delete it to have new keys made.");
            }

            T value = parse(node, path);
            _cache[fileName] = (written, value);
            return value;
        }
    }

    private void Write(string path, JsonObject content)
    {
        if (!Directory.Exists(_directory))
        {
            Directory.CreateDirectory(_directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        using var stream = new FileStream(path, new FileStreamOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.Write,
            UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        });
        using var writer = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true });
        content.WriteTo(writer);
    }

    // The Functions host's V1 format, and its legacy V0 one ({"masterKey":"..","functionKey":".."}).
    private static HostKeys ParseHost(JsonNode node, string path)
    {
        if (node["masterKey"] is JsonValue legacyMaster && legacyMaster.TryGetValue(out string? legacy))
        {
            var functionKeys = new Dictionary<string, string>(StringComparer.Ordinal);
            if (node["functionKey"] is JsonValue f && f.TryGetValue(out string? fk))
            {
                functionKeys["default"] = fk;
            }

            return new HostKeys(legacy, functionKeys, new Dictionary<string, string>());
        }

        string master = node["masterKey"]?["value"]?.GetValue<string>()
            ?? throw new KeyStoreException($"The key file {path} has no masterKey.value; the Functions host's format is {{\"masterKey\":{{\"name\":\"master\",\"value\":\"...\"}},\"functionKeys\":[...],\"systemKeys\":[...]}}.");
        if (node["masterKey"]?["encrypted"]?.GetValue<bool>() == true)
        {
            throw new KeyStoreException($"The key file {path} holds encrypted keys (App Service's data protection); this host reads plain keys only: give it plain values (\"encrypted\": false).");
        }

        return new HostKeys(master, Keys(node["functionKeys"], path), Keys(node["systemKeys"], path));
    }

    private static IReadOnlyDictionary<string, string> ParseFunction(JsonNode node, string path) =>
        node["key"] is JsonValue legacy && legacy.TryGetValue(out string? value)
            ? new Dictionary<string, string>(StringComparer.Ordinal) { ["default"] = value }
            : Keys(node["keys"], path);

    private static Dictionary<string, string> Keys(JsonNode? array, string path)
    {
        var keys = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (JsonNode? key in array as JsonArray ?? [])
        {
            string? name = key?["name"]?.GetValue<string>();
            string? value = key?["value"]?.GetValue<string>();
            if (string.IsNullOrEmpty(name) || string.IsNullOrEmpty(value))
            {
                throw new KeyStoreException($"The key file {path} has a key without a name or a value; each key is {{\"name\":\"...\",\"value\":\"...\",\"encrypted\":false}}.");
            }

            if (key?["encrypted"]?.GetValue<bool>() == true)
            {
                throw new KeyStoreException($"The key '{name}' in {path} is encrypted (App Service's data protection); this host reads plain keys only.");
            }

            keys[name] = value;
        }

        return keys;
    }
}

/// <summary>The key store cannot give keys: one message naming the file or folder and what to do.</summary>
public sealed class KeyStoreException(string message) : Exception(message);
