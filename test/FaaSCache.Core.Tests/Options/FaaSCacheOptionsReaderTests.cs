namespace FaaSCache.Core.Tests.Options;

[Trait("Category", "Unit")]
public sealed class FaaSCacheOptionsReaderTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "faascache-options-tests", Guid.NewGuid().ToString("N"));

    public FaaSCacheOptionsReaderTests() => Directory.CreateDirectory(_dir);

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void The_architecture_sample_parses_to_the_documented_values()
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Section(OptionsJson.ArchitectureSample));

        AssertArchitectureSample(o);
    }

    [Fact]
    public void The_architecture_sample_read_from_a_host_json_file_parses_to_the_documented_values()
    {
        string path = WriteHostJson(OptionsJson.ArchitectureSample);

        AssertArchitectureSample(FaaSCacheOptionsReader.ReadHostJson(path));
    }

    [Theory]
    [InlineData("""{ "version": "2.0" }""")]
    [InlineData("""{ "version": "2.0", "extensions": { "http": { "routePrefix": "api" } } }""")]
    [InlineData("""{ "version": "2.0", "extensions": { "faasCache": null } }""")]
    [InlineData("""{ "version": "2.0", "extensions": { "faasCache": {} } }""")]
    public void A_missing_or_empty_section_gives_the_defaults(string hostJson)
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Section(hostJson));

        AssertDefaults(o);
    }

    [Fact]
    public void A_host_json_file_without_the_section_gives_the_defaults()
    {
        string path = WriteHostJson("""{ "version": "2.0", "logging": { "logLevel": { "default": "Information" } } }""");

        AssertDefaults(FaaSCacheOptionsReader.ReadHostJson(path));
    }

    [Fact]
    public void Keys_and_enum_names_match_ignoring_case()
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            {
              "Consistency": "OWNERASYNC",
              "PERSIST": "None",
              "Eviction": { "Policy": "Size", "SIZETHRESHOLDBYTES": 0, "TTL": "1.00:00:00" },
              "membership": { "HeartBeatInterval": "00:00:01", "failuretimeout": "00:00:02", "virtualnodes": 10000 },
              "prewarm": { "Enabled": "FALSE", "HitRateThreshold": 1 }
            }
            """));

        Assert.Equal(ConsistencyPreset.OwnerAsync, o.Consistency);
        Assert.Equal(PersistMode.None, o.Persist);
        Assert.Equal(EvictionPolicy.Size, o.Eviction.Policy);
        Assert.Equal(0, o.Eviction.SizeThresholdBytes);
        Assert.Equal(TimeSpan.FromDays(1), o.Eviction.Ttl);
        Assert.Equal(TimeSpan.FromSeconds(1), o.Membership.HeartbeatInterval);
        Assert.Equal(TimeSpan.FromSeconds(2), o.Membership.FailureTimeout);
        Assert.Equal(10_000, o.Membership.VirtualNodes);
        Assert.False(o.Prewarm.Enabled);
        Assert.Equal(1.0, o.Prewarm.HitRateThreshold);
    }

    [Fact]
    public void Json_null_and_empty_strings_leave_nullable_settings_unset()
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            { "consistency": "ownerAsync", "persist": null, "capacityBytes": "", "eviction": { "ttl": null } }
            """));

        Assert.Null(o.Persist);
        Assert.Null(o.CapacityBytes);
        Assert.Null(o.Eviction.Ttl);
        Assert.Equal(PersistMode.Async, o.EffectivePersist);
    }

    [Fact]
    public void Explicit_values_for_nullable_settings_are_read()
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            { "consistency": "local", "persist": "async", "capacityBytes": 1048576, "memoryLimitBytes": 67108864, "eviction": { "ttl": "00:05:00" }, "doNotCache": [ "logs/*", "tmp/**" ] }
            """));

        Assert.Equal(64L << 20, o.MemoryLimitBytes);
        Assert.Equal(PersistMode.Async, o.Persist);
        Assert.Equal(1_048_576, o.CapacityBytes);
        Assert.Equal(1_048_576, o.EffectiveCapacityBytes);
        Assert.Equal(TimeSpan.FromMinutes(5), o.Eviction.Ttl);
        Assert.Equal(["logs/*", "tmp/**"], o.DoNotCache);
    }

    [Fact]
    public void An_unknown_consistency_gives_the_documented_message()
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.Read(OptionsJson.Body("""{ "consistency": "fast" }""")));

        Assert.Equal(
            "Invalid value 'fast' for 'extensions:faasCache:consistency': allowed values are strong, owner, ownerAsync, ownerLocalRead, local, localAsync.",
            ex.Message);
        Assert.Equal("extensions:faasCache:consistency", ex.Key);
        Assert.Equal("fast", ex.Value);
    }

    [Theory]
    // Enum names.
    [InlineData("""{ "consistency": "fast" }""", "consistency", "fast", "strong, owner, ownerAsync, ownerLocalRead, local, localAsync")]
    [InlineData("""{ "consistency": "1" }""", "consistency", "1", "strong, owner, ownerAsync, ownerLocalRead, local, localAsync")]
    [InlineData("""{ "consistency": null }""", "consistency", "null", "strong, owner, ownerAsync")]
    [InlineData("""{ "consistency": "ownerAsync", "persist": "later" }""", "persist", "later", "sync, async, none")]
    [InlineData("""{ "eviction": { "policy": "fifo" } }""", "eviction:policy", "fifo", "lru, size")]
    // Numbers: not a number, out of range.
    [InlineData("""{ "memoryHeadroomPercent": "ten" }""", "memoryHeadroomPercent", "ten", "whole numbers from 0 to 90")]
    [InlineData("""{ "memoryHeadroomPercent": 10.5 }""", "memoryHeadroomPercent", "10.5", "whole numbers from 0 to 90")]
    [InlineData("""{ "memoryHeadroomPercent": 91 }""", "memoryHeadroomPercent", "91", "whole numbers from 0 to 90")]
    [InlineData("""{ "memoryHeadroomPercent": -1 }""", "memoryHeadroomPercent", "-1", "whole numbers from 0 to 90")]
    [InlineData("""{ "memoryHeadroomPercent": null }""", "memoryHeadroomPercent", "null", "whole numbers from 0 to 90")]
    [InlineData("""{ "memoryLimitBytes": 67108863 }""", "memoryLimitBytes", "67108863", "at least 67108864 (64 MiB)")]
    [InlineData("""{ "memoryLimitBytes": "1GB" }""", "memoryLimitBytes", "1GB", "at least 67108864 (64 MiB)")]
    [InlineData("""{ "capacityBytes": 1048575 }""", "capacityBytes", "1048575", "at least 1048576")]
    [InlineData("""{ "capacityBytes": "1GB" }""", "capacityBytes", "1GB", "at least 1048576")]
    [InlineData("""{ "eviction": { "sizeThresholdBytes": -1 } }""", "eviction:sizeThresholdBytes", "-1", "at least 0")]
    [InlineData("""{ "eviction": { "sizeThresholdBytes": "12k" } }""", "eviction:sizeThresholdBytes", "12k", "at least 0")]
    [InlineData("""{ "prewarm": { "hitRateThreshold": 1.5 } }""", "prewarm:hitRateThreshold", "1.5", "numbers from 0 to 1")]
    [InlineData("""{ "prewarm": { "hitRateThreshold": -0.1 } }""", "prewarm:hitRateThreshold", "-0.1", "numbers from 0 to 1")]
    [InlineData("""{ "prewarm": { "hitRateThreshold": "NaN" } }""", "prewarm:hitRateThreshold", "NaN", "numbers from 0 to 1")]
    [InlineData("""{ "membership": { "virtualNodes": 0 } }""", "membership:virtualNodes", "0", "whole numbers from 1 to 10000")]
    [InlineData("""{ "membership": { "virtualNodes": 10001 } }""", "membership:virtualNodes", "10001", "whole numbers from 1 to 10000")]
    [InlineData("""{ "membership": { "virtualNodes": "many" } }""", "membership:virtualNodes", "many", "whole numbers from 1 to 10000")]
    // Booleans.
    [InlineData("""{ "prewarm": { "enabled": "yes" } }""", "prewarm:enabled", "yes", "true and false")]
    [InlineData("""{ "prewarm": { "enabled": 1 } }""", "prewarm:enabled", "1", "true and false")]
    [InlineData("""{ "scaling": { "bandwidth": "maybe" } }""", "scaling:bandwidth", "maybe", "true and false")]
    // Time spans.
    [InlineData("""{ "eviction": { "ttl": "00:00:00" } }""", "eviction:ttl", "00:00:00", "positive time spans such as 00:05:00")]
    [InlineData("""{ "eviction": { "ttl": "-00:05:00" } }""", "eviction:ttl", "-00:05:00", "positive time spans such as 00:05:00")]
    [InlineData("""{ "eviction": { "ttl": 300 } }""", "eviction:ttl", "300", "positive time spans such as 00:05:00")]
    [InlineData("""{ "eviction": { "ttl": "soon" } }""", "eviction:ttl", "soon", "positive time spans such as 00:05:00")]
    [InlineData("""{ "membership": { "heartbeatInterval": "00:00:00" } }""", "membership:heartbeatInterval", "00:00:00", "positive time spans")]
    [InlineData("""{ "membership": { "heartbeatInterval": "5s" } }""", "membership:heartbeatInterval", "5s", "positive time spans")]
    [InlineData("""{ "membership": { "failureTimeout": "00:00:05" } }""", "membership:failureTimeout", "00:00:05", "greater than 'extensions:faasCache:membership:heartbeatInterval' (00:00:05)")]
    [InlineData("""{ "membership": { "heartbeatInterval": "00:00:20" } }""", "membership:failureTimeout", "00:00:15", "greater than 'extensions:faasCache:membership:heartbeatInterval' (00:00:20)")]
    // Objects and arrays where a scalar belongs, and the other way round.
    [InlineData("""{ "consistency": { "mode": "strong" } }""", "consistency", "{mode: strong}", "strong, owner, ownerAsync")]
    [InlineData("""{ "memoryHeadroomPercent": [ 10 ] }""", "memoryHeadroomPercent", "[10]", "whole numbers from 0 to 90")]
    [InlineData("""{ "eviction": "lru" }""", "eviction", "lru", "objects with the keys policy, sizeThresholdBytes, ttl")]
    [InlineData("""{ "membership": 5 }""", "membership", "5", "objects with the keys heartbeatInterval, failureTimeout, virtualNodes")]
    [InlineData("""{ "doNotCache": "logs/*" }""", "doNotCache", "logs/*", "arrays of non-empty strings")]
    [InlineData("""{ "doNotCache": { "a": "logs/*" } }""", "doNotCache", "{a: logs/*}", "arrays of non-empty strings")]
    [InlineData("""{ "doNotCache": [ "logs/*", { "glob": "x" } ] }""", "doNotCache:1", "{glob: x}", "non-empty strings")]
    [InlineData("""{ "doNotCache": [ "logs/*", "" ] }""", "doNotCache:1", "", "non-empty strings")]
    [InlineData("""{ "doNotCache": [ null ] }""", "doNotCache:0", "null", "non-empty strings")]
    [InlineData("""{ "doNotCache": [ "   " ] }""", "doNotCache:0", "   ", "non-empty strings")]
    public void An_invalid_value_is_rejected_naming_the_key_the_value_and_what_is_allowed(string body, string key, string value, string allowed)
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.Read(OptionsJson.Body(body)));

        string fullKey = "extensions:faasCache:" + key;
        Assert.Equal(fullKey, ex.Key);
        Assert.Contains($"'{fullKey}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains($"'{value}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains(allowed, ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "evictionPolicy": "lru" }""", "evictionPolicy", "consistency, persist, eviction, memoryHeadroomPercent, memoryLimitBytes, capacityBytes, doNotCache, sdkEndpoint, prewarm, scaling, membership, results")]
    [InlineData("""{ "eviction": { "polcy": "lru" } }""", "eviction:polcy", "policy, sizeThresholdBytes, ttl")]
    [InlineData("""{ "prewarm": { "threshold": 0.5 } }""", "prewarm:threshold", "enabled, hitRateThreshold")]
    [InlineData("""{ "scaling": { "cpu": true } }""", "scaling:cpu", "compute, cacheSize, bandwidth, targetConcurrency, targetLatency, lowAccessRate, profileInterval")]
    [InlineData("""{ "membership": { "ring": { "nodes": 3 } } }""", "membership:ring", "heartbeatInterval, failureTimeout, virtualNodes, watchInterval")]
    public void An_unknown_key_is_rejected_naming_it_and_listing_the_allowed_keys(string body, string key, string allowedKeys)
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.Read(OptionsJson.Body(body)));

        string fullKey = "extensions:faasCache:" + key;
        Assert.Equal(fullKey, ex.Key);
        Assert.Contains($"Unknown key '{fullKey}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains("allowed keys are " + allowedKeys + ".", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "consistency": "strong", "persist": "async" }""", "async")]
    [InlineData("""{ "consistency": "Strong", "persist": "none" }""", "none")]
    [InlineData("""{ "persist": "async" }""", "async")]
    public void Strong_consistency_without_synchronous_persistence_is_rejected_naming_both_keys(string body, string persist)
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.Read(OptionsJson.Body(body)));

        Assert.Equal("extensions:faasCache:persist", ex.Key);
        Assert.Equal(persist, ex.Value);
        Assert.Contains("'extensions:faasCache:persist'", ex.Message, StringComparison.Ordinal);
        Assert.Contains("'extensions:faasCache:consistency' is strong", ex.Message, StringComparison.Ordinal);
        Assert.Contains("allowed values are sync or null", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("strong", "sync")]
    [InlineData("ownerAsync", "sync")]
    [InlineData("local", "none")]
    [InlineData("owner", "async")]
    public void Persistence_other_than_sync_is_allowed_with_presets_other_than_strong(string consistency, string persist)
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Body($$"""{ "consistency": "{{consistency}}", "persist": "{{persist}}" }"""));

        Assert.Equal(persist, o.EffectivePersist.ToString(), ignoreCase: true);
    }

    [Fact]
    public void A_malformed_host_json_file_is_rejected_naming_the_file_and_the_parser_position()
    {
        string path = WriteHostJson("{\n  \"version\": \"2.0\",\n  \"extensions\" {\n  }\n}\n");

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Equal(path, ex.FilePath);
        Assert.Contains($"'{path}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains("invalid JSON at line 3, position", ex.Message, StringComparison.Ordinal);
        Assert.Contains("Expected a ':'", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("[ 1, 2 ]")]
    [InlineData("""{ "version": "2.0", "Version": "2.0" }""")]
    public void A_host_json_file_that_is_not_one_json_object_is_rejected_naming_the_file(string content)
    {
        string path = WriteHostJson(content);

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Contains($"'{path}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains("invalid JSON", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_missing_host_json_file_is_rejected_naming_the_file()
    {
        string path = Path.Combine(_dir, "missing", "host.json");

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Equal(path, ex.FilePath);
        Assert.Contains($"'{path}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains("does not exist", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("\"1.0\"", "1.0")]
    [InlineData("3", "3")]
    public void A_host_json_version_other_than_2_0_is_rejected(string version, string shown)
    {
        string path = WriteHostJson($$"""{ "version": {{version}} }""");

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Equal("version", ex.Key);
        Assert.Equal(shown, ex.Value);
        Assert.Contains("allowed value is 2.0", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_invalid_setting_in_a_host_json_file_names_the_file_and_the_key()
    {
        string path = WriteHostJson("""{ "version": "2.0", "extensions": { "faasCache": { "eviction": { "sizeThresholdBytes": -5 } } } }""");

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Equal(path, ex.FilePath);
        Assert.Equal("extensions:faasCache:eviction:sizeThresholdBytes", ex.Key);
        Assert.Equal("-5", ex.Value);
        Assert.StartsWith(path + ": Invalid value '-5' for 'extensions:faasCache:eviction:sizeThresholdBytes'", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Strong_consistency_with_async_persistence_in_a_host_json_file_is_rejected()
    {
        string path = WriteHostJson("""{ "version": "2.0", "extensions": { "faasCache": { "consistency": "strong", "persist": "async" } } }""");

        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.ReadHostJson(path));

        Assert.Equal("extensions:faasCache:persist", ex.Key);
        Assert.Contains("'extensions:faasCache:consistency' is strong", ex.Message, StringComparison.Ordinal);
    }

    private static void AssertArchitectureSample(FaaSCacheOptions o)
    {
        Assert.Equal(ConsistencyPreset.Strong, o.Consistency);
        Assert.Equal(PersistMode.Sync, o.Persist);
        Assert.Equal(EvictionPolicy.Lru, o.Eviction.Policy);
        Assert.Equal(12_288, o.Eviction.SizeThresholdBytes);
        Assert.Null(o.Eviction.Ttl);
        Assert.Equal(10, o.MemoryHeadroomPercent);
        Assert.Null(o.CapacityBytes);
        Assert.Equal(["logs/*"], o.DoNotCache);
        Assert.True(o.Prewarm.Enabled);
        Assert.Equal(0.5, o.Prewarm.HitRateThreshold);
        Assert.True(o.Scaling.CacheSize);
        Assert.True(o.Scaling.Bandwidth);
        Assert.Equal(TimeSpan.FromSeconds(5), o.Membership.HeartbeatInterval);
        Assert.Equal(TimeSpan.FromSeconds(15), o.Membership.FailureTimeout);
        Assert.Equal(100, o.Membership.VirtualNodes);
    }

    private static void AssertDefaults(FaaSCacheOptions o)
    {
        var d = new FaaSCacheOptions();
        Assert.Equal(FaaSCacheOptionsFormatter.Format(d), FaaSCacheOptionsFormatter.Format(o));
        Assert.Equal(ConsistencyPreset.Strong, o.Consistency);
        Assert.Null(o.Persist);
        Assert.Empty(o.DoNotCache);
    }

    private string WriteHostJson(string content)
    {
        string path = Path.Combine(_dir, "host.json");
        File.WriteAllText(path, content);
        return path;
    }
}
