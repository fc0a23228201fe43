using System.Security.Cryptography;
using System.Text.Json.Nodes;

namespace FaaSCache.Testing;

/// <summary>The Functions host's key files (<c>host.json</c>, <c>&lt;function&gt;.json</c> in the secrets folder), written as tests need them.</summary>
public static class HostKeyFiles
{
    /// <summary>The master key in <paramref name="secretsFolder"/>'s host.json, written (with a host function key <c>default</c>) when absent.</summary>
    public static string EnsureMasterKey(string secretsFolder)
    {
        string path = Path.Combine(secretsFolder, "host.json");
        if (File.Exists(path))
        {
            return JsonNode.Parse(File.ReadAllText(path))!["masterKey"]!["value"]!.GetValue<string>();
        }

        string master = NewKey();
        WriteHostKeys(secretsFolder, master, new Dictionary<string, string> { ["default"] = NewKey() }, new Dictionary<string, string>());
        return master;
    }

    /// <summary>Writes host.json with the given keys (the Functions host's V1 format, plain values).</summary>
    public static void WriteHostKeys(string secretsFolder, string masterKey, IReadOnlyDictionary<string, string> functionKeys, IReadOnlyDictionary<string, string> systemKeys)
    {
        Directory.CreateDirectory(secretsFolder);
        var json = new JsonObject
        {
            ["masterKey"] = Key("master", masterKey),
            ["functionKeys"] = new JsonArray([.. functionKeys.Select(k => (JsonNode)Key(k.Key, k.Value))]),
            ["systemKeys"] = new JsonArray([.. systemKeys.Select(k => (JsonNode)Key(k.Key, k.Value))]),
        };
        File.WriteAllText(Path.Combine(secretsFolder, "host.json"), json.ToJsonString());
    }

    /// <summary>Writes &lt;function&gt;.json with the given keys.</summary>
    public static void WriteFunctionKeys(string secretsFolder, string function, IReadOnlyDictionary<string, string> keys)
    {
        Directory.CreateDirectory(secretsFolder);
        var json = new JsonObject { ["keys"] = new JsonArray([.. keys.Select(k => (JsonNode)Key(k.Key, k.Value))]) };
        File.WriteAllText(Path.Combine(secretsFolder, function.ToLowerInvariant() + ".json"), json.ToJsonString());
    }

    /// <summary>A key in the Functions host's shape (40 random bytes, URL-safe base64).</summary>
    public static string NewKey() => Convert.ToBase64String(RandomNumberGenerator.GetBytes(40)).Replace('+', '-').Replace('/', '_');

    private static JsonObject Key(string name, string value) => new() { ["name"] = name, ["value"] = value, ["encrypted"] = false };
}
