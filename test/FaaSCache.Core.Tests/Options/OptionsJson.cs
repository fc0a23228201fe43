using Microsoft.Extensions.Configuration;

namespace FaaSCache.Core.Tests.Options;

/// <summary>Builds configuration from in-memory host.json text, as the host does from the file.</summary>
internal static class OptionsJson
{
    public const string ArchitectureSample = """
        {
          "version": "2.0",
          "extensions": {
            "faasCache": {
              "consistency": "strong",
              "persist": "sync",
              "eviction": { "policy": "lru", "sizeThresholdBytes": 12288, "ttl": null },
              "memoryHeadroomPercent": 10,
              "capacityBytes": null,
              "doNotCache": [ "logs/*" ],
              "prewarm": { "enabled": true, "hitRateThreshold": 0.5 },
              "scaling": { "cacheSize": true, "bandwidth": true },
              "membership": { "heartbeatInterval": "00:00:05", "failureTimeout": "00:00:15", "virtualNodes": 100 }
            }
          }
        }
        """;

    public static IConfigurationRoot Root(string json) =>
        new ConfigurationBuilder().AddJsonStream(new MemoryStream(Encoding.UTF8.GetBytes(json))).Build();

    /// <summary>The <c>extensions:faasCache</c> section of a whole host.json.</summary>
    public static IConfigurationSection Section(string hostJson) => Root(hostJson).GetSection("extensions:faasCache");

    /// <summary>The section whose body is <paramref name="faasCacheBody"/> (the JSON value of <c>faasCache</c>).</summary>
    public static IConfigurationSection Body(string faasCacheBody) =>
        Section($$"""{ "version": "2.0", "extensions": { "faasCache": {{faasCacheBody}} } }""");
}
