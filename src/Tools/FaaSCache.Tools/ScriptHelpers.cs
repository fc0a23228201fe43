using System.Text.Json.Nodes;
using FaaSCache.Hosting;

namespace FaaSCache.Tools;

/// <summary>Small helpers for the scripts, so that they need no inline Python: a free port, an edit of host.json.</summary>
public static class ScriptHelpers
{
    /// <summary>Creates <c>free-port</c> and <c>host-json</c> (<c>keys</c>, <c>set</c>).</summary>
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
        var value = new Argument<string>("value") { Description = "The new value as JSON (null, 42, true, [\"a/*\"], \"text\"); anything that is not JSON is taken as a string." };
        var set = new Command("set", "Sets one setting of a host.json (creating the objects on its path); prints what it replaced. A value under extensions.faasCache is checked as the host reads it, and refused (the file unchanged) when the host would refuse it.") { file, path, value };
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

            JsonNode? node = ParseValue(r.GetValue(value)!);
            JsonNode? old = parent[segments[^1]]?.DeepClone();
            parent[segments[^1]] = node;
            string edited = root.ToJsonString(new JsonSerializerOptions { WriteIndented = true });
            if (r.GetValue(path)!.StartsWith("extensions.faasCache", StringComparison.OrdinalIgnoreCase) && CheckAsHostReads(edited) is { } refused)
            {
                await Console.Error.WriteLineAsync($"faascache host-json set: {refused} ({fileName} is unchanged)");
                return 1;
            }

            if (old is not null)
            {
                Console.WriteLine($"replaced {r.GetValue(path)} = {old.ToJsonString()}");
            }

            await File.WriteAllTextAsync(fileName, edited, ct);
            return 0;
        });
        var keys = new Command("keys", "Prints every key of extensions.faasCache with its values, what it does and its default, as a Markdown table (docs/configuration.md holds the same table).");
        keys.SetAction(_ =>
        {
            Console.Write(FaaSCache.Options.HostJsonKeys.Markdown());
            return 0;
        });
        yield return new Command("host-json", "Lists the keys of extensions.faasCache, or edits a function app's host.json.") { keys, set };
    }

    /// <summary>The value as JSON (null, a number, a boolean, an array, an object, a quoted string), else the text as a string.</summary>
    private static JsonNode? ParseValue(string text)
    {
        try
        {
            return JsonNode.Parse(text);
        }
        catch (JsonException)
        {
            return JsonValue.Create(text);
        }
    }

    /// <summary>Reads the edited host.json as the host does; the reason it would refuse it, or null.</summary>
    private static string? CheckAsHostReads(string hostJson)
    {
        string scratch = Path.Combine(Path.GetTempPath(), $"faascache-host-json-{Guid.NewGuid():N}.json");
        try
        {
            File.WriteAllText(scratch, hostJson);
            FaaSCache.Options.FaaSCacheOptionsReader.ReadHostJson(scratch);
            return null;
        }
        catch (FaaSCache.Options.FaaSCacheConfigurationException e)
        {
            return e.Message.Replace(scratch, "host.json", StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(scratch);
        }
    }
}
