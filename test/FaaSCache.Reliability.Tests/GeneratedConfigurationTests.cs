using System.Collections;
using System.Text.Json.Nodes;
using FaaSCache.Host.AppModel;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// Bad input, generated (CsCheck, bounded counts): host.json sections and function.json files with wrong types, out-of-range
/// values, unknown keys and broken JSON. Each one either loads or fails with the one error type of its reader, whose
/// message names the offending key (or the file); nothing else is ever thrown.
/// </summary>
[Trait("Category", "Unit")]
public sealed class GeneratedConfigurationTests : IDisposable
{
    private static readonly string WorkersDirectory = Path.Combine(RepositoryRoot.Find(), "src", "Workers");

    /// <summary>Every known key of the section (nested ones with their parent) and a few unknown ones.</summary>
    private static readonly string[] Keys =
    [
        "consistency", "persist", "memoryHeadroomPercent", "memoryLimitBytes", "capacityBytes", "doNotCache",
        "eviction:policy", "eviction:sizeThresholdBytes", "eviction:ttl", "prewarm:enabled", "prewarm:hitRateThreshold",
        "scaling:compute", "scaling:cacheSize", "scaling:bandwidth", "scaling:targetConcurrency", "scaling:targetLatency",
        "scaling:lowAccessRate", "scaling:profileInterval", "membership:heartbeatInterval", "membership:failureTimeout",
        "membership:virtualNodes", "membership:watchInterval", "consistencyy", "eviction:polcy", "unknownField",
    ];

    /// <summary>JSON values: valid-looking and not, of every JSON type.</summary>
    private static readonly Gen<JsonNode?> Values = Gen.OneOf(
        Gen.Long.Select(n => (JsonNode?)JsonValue.Create(n)),
        Gen.Int[-5, 200].Select(n => (JsonNode?)JsonValue.Create(n)),
        Gen.Double.Where(double.IsFinite).Select(d => (JsonNode?)JsonValue.Create(d)),
        Gen.Bool.Select(b => (JsonNode?)JsonValue.Create(b)),
        Gen.String.Select(s => (JsonNode?)JsonValue.Create(s)),
        Gen.OneOf("strong", "owner", "ownerAsync", "local", "sync", "async", "lru", "00:00:01", "00:00:00", "-00:00:01", "1.00:00:00", "ab:cd", "", "0", "-1", "1e400")
            .Select(s => (JsonNode?)JsonValue.Create(s)),
        Gen.Const((JsonNode?)null),
        Gen.Const(() => (JsonNode?)new JsonArray(1, "x")),
        Gen.Const(() => (JsonNode?)new JsonObject { ["x"] = 1 }));

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("faascache-badinput-");

    [Fact]
    public void A_generated_faasCache_section_loads_or_fails_with_an_error_naming_the_key_and_the_value()
    {
        Gen.Select(Gen.OneOf(Keys), Values).Array[1, 4].Sample(settings =>
        {
            var section = new JsonObject();
            foreach ((string key, JsonNode? value) in settings)
            {
                JsonObject parent = section;
                string[] path = key.Split(':');
                foreach (string part in path[..^1])
                {
                    parent = parent[part] as JsonObject ?? (JsonObject)(parent[part] = new JsonObject());
                }

                parent[path[^1]] = value?.DeepClone();
            }

            string hostJson = new JsonObject { ["version"] = "2.0", ["extensions"] = new JsonObject { ["faasCache"] = section } }.ToJsonString();
            string file = NewHostJsonPath();
            File.WriteAllText(file, hostJson);
            try
            {
                _ = FaaSCacheOptionsReader.ReadHostJson(file);
                Assert.DoesNotContain(settings, s => s.Item1 is "consistencyy" or "eviction:polcy" or "unknownField");
            }
            catch (FaaSCacheConfigurationException e)
            {
                Assert.True(e.Key is not null, $"no key named: {e.Message} ({hostJson})");
                string last = e.Key.Split(':')[^1];
                Assert.Contains(last, e.Message, StringComparison.Ordinal);
                Assert.Contains(file, e.Message, StringComparison.Ordinal);
            }
        }, iter: 400);
    }

    [Fact]
    public void A_generated_host_json_file_that_is_not_json_fails_naming_the_file()
    {
        Gen.String[0, 60].Sample(text =>
        {
            string file = NewHostJsonPath();
            File.WriteAllText(file, "{ \"version\": \"2.0\", " + text);
            try
            {
                _ = FaaSCacheOptionsReader.ReadHostJson(file);
            }
            catch (FaaSCacheConfigurationException e)
            {
                Assert.Contains(file, e.Message, StringComparison.Ordinal);
            }
        }, iter: 200);
    }

    [Fact]
    public void A_generated_function_json_loads_or_fails_with_an_app_load_error_naming_its_file()
    {
        Gen<JsonNode?> bindings = Gen.Select(
            Gen.OneOf("httpTrigger", "blob", "http", "blobTrigger", "queue", "", "BLOB"),
            Gen.OneOf("in", "out", "inout", "sideways", ""),
            Gen.OneOf("req", "data", "$return", "", "a b"),
            Gen.OneOf("c/{name}", "c/", "{name}", "c/{name", "c//x", "", "UPPER/{x}"),
            Values)
            .Select((type, direction, name, path, extra) => (JsonNode?)new JsonObject
            {
                ["type"] = type,
                ["direction"] = direction,
                ["name"] = name,
                ["path"] = path,
                ["connection"] = "AzureWebJobsStorage",
                ["extra"] = extra?.DeepClone(),
            });
        Gen.Select(bindings.Array[0, 4], Gen.Bool).Sample((list, scriptMissing) =>
        {
            using var app = new FunctionAppBuilder { NamePrefix = "faascache-badinput-app" }
                .WithHostJson("""{ "version": "2.0" }""")
                .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
                .WithSetting("AzureWebJobsStorage", "UseDevelopmentStorage=true")
                .WithFunction("Generated", new JsonObject { ["scriptFile"] = scriptMissing ? "missing.py" : "__init__.py", ["bindings"] = new JsonArray([.. list]) }.ToJsonString(), ("__init__.py", "def main(req):\n    return None\n"))
                .Build();
            try
            {
                _ = FunctionAppLoader.Load(app.Path, WorkersDirectory, new Hashtable());
            }
            catch (AppLoadException e)
            {
                Assert.Contains("Generated", e.Message, StringComparison.Ordinal);
            }
        }, iter: 150);
    }

    public void Dispose() => _folder.Delete(recursive: true);

    /// <summary>A host.json path of its own: CsCheck runs samples on several threads at once.</summary>
    private string NewHostJsonPath() => Path.Combine(Directory.CreateDirectory(Path.Combine(_folder.FullName, Guid.NewGuid().ToString("N"))).FullName, "host.json");
}
