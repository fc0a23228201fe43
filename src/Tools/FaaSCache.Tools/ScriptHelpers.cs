using System.CommandLine;
using System.Text.Json;
using System.Text.Json.Nodes;
using FaaSCache.Hosting;

namespace FaaSCache.Tools;

/// <summary>Small helpers for the scripts, so that they need no inline Python: a free port, an edit of host.json.</summary>
public static class ScriptHelpers
{
    /// <summary>Creates <c>free-port</c> and <c>host-json</c>.</summary>
    public static IEnumerable<Command> Create()
    {
        var freePort = new Command("free-port", "Prints a TCP port that is free on 127.0.0.1 now.");
        freePort.SetAction(_ =>
        {
            Console.WriteLine(FreePorts.Get());
            return 0;
        });
        yield return freePort;

        var file = new Argument<string>("file") { Description = "The host.json to change." };
        var path = new Argument<string>("path") { Description = "Dotted path of the setting, e.g. extensions.faasCache.consistency" };
        var value = new Argument<string>("value") { Description = "The new value (a JSON string; numbers and booleans as they parse)." };
        var set = new Command("set", "Sets one setting of a host.json (creating the objects on its path); prints what it replaced.") { file, path, value };
        set.SetAction(async (r, ct) =>
        {
            string fileName = r.GetValue(file)!;
            JsonObject root;
            try
            {
                root = JsonNode.Parse(await File.ReadAllTextAsync(fileName, ct), documentOptions: new JsonDocumentOptions { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true })?.AsObject()
                    ?? throw new JsonException("the file holds null");
            }
            catch (Exception e) when (e is JsonException or InvalidOperationException or IOException)
            {
                await Console.Error.WriteLineAsync($"error: '{fileName}' is not a JSON object: {e.Message}");
                return 1;
            }

            string[] segments = r.GetValue(path)!.Split('.');
            JsonObject parent = root;
            foreach (string segment in segments[..^1])
            {
                parent = parent[segment] as JsonObject ?? (JsonObject)(parent[segment] = new JsonObject());
            }

            string text = r.GetValue(value)!;
            JsonNode? node = long.TryParse(text, out long n) ? JsonValue.Create(n) : bool.TryParse(text, out bool b) ? JsonValue.Create(b) : JsonValue.Create(text);
            JsonNode? old = parent[segments[^1]];
            if (old is not null)
            {
                Console.WriteLine($"replaced {r.GetValue(path)} = {old.ToJsonString()}");
            }

            parent[segments[^1]] = node;
            await File.WriteAllTextAsync(fileName, root.ToJsonString(new JsonSerializerOptions { WriteIndented = true }), ct);
            return 0;
        });
        yield return new Command("host-json", "Edits a function app's host.json.") { set };
    }
}
