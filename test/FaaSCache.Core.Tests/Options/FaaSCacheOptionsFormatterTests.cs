using System.Text.Json.Nodes;

namespace FaaSCache.Core.Tests.Options;

[Trait("Category", "Unit")]
public sealed class FaaSCacheOptionsFormatterTests
{
    [Fact]
    public void The_effective_options_are_indented_camel_case_json_with_enum_names()
    {
        var o = new FaaSCacheOptions { Consistency = ConsistencyPreset.OwnerLocalRead, DoNotCache = ["logs/*"] };
        o.Eviction.Policy = EvictionPolicy.Size;
        o.Eviction.Ttl = TimeSpan.FromMinutes(5);

        string json = FaaSCacheOptionsFormatter.Format(o);

        Assert.Contains('\n', json);
        using JsonDocument doc = JsonDocument.Parse(json);
        JsonElement root = doc.RootElement;
        Assert.Equal("ownerLocalRead", root.GetProperty("consistency").GetString());
        Assert.Equal(JsonValueKind.Null, root.GetProperty("persist").ValueKind);
        Assert.Equal("sync", root.GetProperty("effectivePersist").GetString());
        Assert.Equal("size", root.GetProperty("eviction").GetProperty("policy").GetString());
        Assert.Equal(12_288, root.GetProperty("eviction").GetProperty("sizeThresholdBytes").GetInt64());
        Assert.Equal("00:05:00", root.GetProperty("eviction").GetProperty("ttl").GetString());
        Assert.Equal(JsonValueKind.Null, root.GetProperty("capacityBytes").ValueKind);
        Assert.Equal(o.EffectiveCapacityBytes, root.GetProperty("effectiveCapacityBytes").GetInt64());
        Assert.Equal("logs/*", root.GetProperty("doNotCache")[0].GetString());
        // The Load Daemon acts on prewarm; the Memory Daemon on the headroom and the limit.
        Assert.True(root.GetProperty("prewarm").GetProperty("enabled").GetBoolean());
        Assert.Equal(o.Prewarm.HitRateThreshold, root.GetProperty("prewarm").GetProperty("hitRateThreshold").GetDouble());
        Assert.Equal(o.MemoryHeadroomPercent, root.GetProperty("memoryHeadroomPercent").GetInt32());
        Assert.Equal(JsonValueKind.Null, root.GetProperty("memoryLimitBytes").ValueKind);
        // Scaling acts (the voters and the bandwidth planner read it), so its effective values are shown.
        Assert.True(root.GetProperty("scaling").GetProperty("bandwidth").GetBoolean());
        Assert.Equal(8, root.GetProperty("scaling").GetProperty("targetConcurrency").GetInt32());
        Assert.Equal("00:05:00", root.GetProperty("scaling").GetProperty("profileInterval").GetString());
        Assert.Equal("00:00:05", root.GetProperty("membership").GetProperty("heartbeatInterval").GetString());
        Assert.Equal("00:00:15", root.GetProperty("membership").GetProperty("failureTimeout").GetString());
        Assert.Equal(100, root.GetProperty("membership").GetProperty("virtualNodes").GetInt32());
        Assert.Equal("00:00:01", root.GetProperty("membership").GetProperty("watchInterval").GetString());
    }

    [Fact]
    public void The_effective_persist_of_an_async_preset_is_async_and_an_explicit_capacity_is_shown()
    {
        var o = new FaaSCacheOptions { Consistency = ConsistencyPreset.LocalAsync, CapacityBytes = 8L << 20, MemoryLimitBytes = 256L << 20 };

        using JsonDocument doc = JsonDocument.Parse(FaaSCacheOptionsFormatter.Format(o));

        Assert.Equal("localAsync", doc.RootElement.GetProperty("consistency").GetString());
        Assert.Equal("async", doc.RootElement.GetProperty("effectivePersist").GetString());
        Assert.Equal(8L << 20, doc.RootElement.GetProperty("capacityBytes").GetInt64());
        Assert.Equal(8L << 20, doc.RootElement.GetProperty("effectiveCapacityBytes").GetInt64());
        Assert.Equal(256L << 20, doc.RootElement.GetProperty("memoryLimitBytes").GetInt64());
    }

    [Fact]
    public void The_formatted_settings_read_back_to_the_same_options()
    {
        FaaSCacheOptions original = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            { "consistency": "ownerAsync", "persist": "none", "eviction": { "policy": "size", "ttl": "01:00:00" },
              "capacityBytes": 2097152, "doNotCache": [ "a/*", "b/**" ],
              "membership": { "heartbeatInterval": "00:00:02", "failureTimeout": "00:00:07", "virtualNodes": 50 } }
            """));
        string formatted = FaaSCacheOptionsFormatter.Format(original);
        JsonObject settings = JsonNode.Parse(formatted)!.AsObject();
        settings.Remove("effectivePersist");
        settings.Remove("effectiveCapacityBytes");

        FaaSCacheOptions reread = FaaSCacheOptionsReader.Read(OptionsJson.Body(settings.ToJsonString()));

        Assert.Equal(formatted, FaaSCacheOptionsFormatter.Format(reread));
    }
}
