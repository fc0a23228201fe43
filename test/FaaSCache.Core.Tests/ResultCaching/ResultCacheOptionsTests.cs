using FaaSCache.Core.Tests.Options;
using FaaSCache.ResultCaching;

namespace FaaSCache.Core.Tests.ResultCaching;

/// <summary>Issue 37: <c>extensions.faasCache.results</c> read and checked like every other key; results kept in memory.</summary>
[Trait("Category", "Unit")]
public sealed class ResultCacheOptionsTests
{
    [Fact]
    public void The_results_section_is_read_with_each_function_s_key_ttl_size_location_and_outputs()
    {
        FaaSCacheOptions o = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            { "results": { "location": "cluster", "redis": "localhost:6379,password=secret", "capacityBytes": 1048576,
                "functions": {
                  "Thumbnail": { "key": [ "route:name", "json:image.id", "header:x-size" ], "ttl": "00:01:00", "maxBytes": 100, "location": "redis", "skipOutputs": true },
                  "Other": {} } } }
            """));

        Assert.Equal(ResultLocation.Cluster, o.Results.Location);
        Assert.Equal(1_048_576, o.Results.CapacityBytes);
        FunctionResultOptions thumbnail = o.Results.Functions["thumbnail"];
        Assert.Equal(["route:name", "json:image.id", "header:x-size"], thumbnail.Key);
        Assert.Equal((TimeSpan.FromMinutes(1), 100L, ResultLocation.Redis, true), (thumbnail.Ttl, thumbnail.MaxBytes, thumbnail.Location, thumbnail.SkipOutputs));
        Assert.Equal(ResultLocation.Redis, o.Results.LocationOf(thumbnail));
        Assert.Equal(["body"], o.Results.Functions["Other"].Key);
        Assert.Equal(ResultLocation.Cluster, o.Results.LocationOf(o.Results.Functions["Other"]));
        string log = FaaSCacheOptionsFormatter.Format(o);
        Assert.DoesNotContain("secret", log, StringComparison.Ordinal);
        Assert.Contains("password=***", log, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "results": { "functions": { "F": { "key": [ "cookie:x" ] } } } }""", "results:functions:F:key:0", "cookie:x", "body, method, json:<property path>")]
    [InlineData("""{ "results": { "functions": { "F": { "key": [ "query" ] } } } }""", "results:functions:F:key:0", "query", "query:<name>")]
    [InlineData("""{ "results": { "functions": { "F": { "key": [] } } } }""", "results:functions:F:key", "[]", "non-empty arrays of key parts")]
    [InlineData("""{ "results": { "functions": { "F": { "ttl": "00:00:00" } } } }""", "results:functions:F:ttl", "00:00:00", "positive time spans")]
    [InlineData("""{ "results": { "functions": { "F": { "maxBytes": 0 } } } }""", "results:functions:F:maxBytes", "0", "at least 1")]
    [InlineData("""{ "results": { "functions": { "F": { "location": "disk" } } } }""", "results:functions:F:location", "disk", "local, cluster, redis")]
    [InlineData("""{ "results": { "functions": { "F": { "keys": [ "body" ] } } } }""", "results:functions:F:keys", "[body]", "key, ttl, maxBytes, location, skipOutputs")]
    [InlineData("""{ "results": { "functions": [ "F" ] } }""", "results:functions:0", "F", "key, ttl")]
    [InlineData("""{ "results": { "location": "redis" } }""", "results:redis", "null", "required because 'extensions:faasCache:results:location' or a function's location is redis")]
    [InlineData("""{ "results": { "functions": { "F": { "location": "redis" } } } }""", "results:redis", "null", "required because")]
    [InlineData("""{ "results": { "capacityBytes": 1024 } }""", "results:capacityBytes", "1024", "at least 65536")]
    public void A_bad_results_setting_is_rejected_naming_the_key_the_value_and_what_is_allowed(string body, string key, string value, string allowed)
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(() => FaaSCacheOptionsReader.Read(OptionsJson.Body(body)));

        Assert.Equal("extensions:faasCache:" + key, ex.Key);
        Assert.Contains($"'{value}'", ex.Message, StringComparison.Ordinal);
        Assert.Contains(allowed, ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("body", ResultKeySource.Body, "")]
    [InlineData("METHOD", ResultKeySource.Method, "")]
    [InlineData("json:a.b", ResultKeySource.Json, "a.b")]
    [InlineData("query:size", ResultKeySource.Query, "size")]
    [InlineData("route:name", ResultKeySource.Route, "name")]
    [InlineData("header:X-Model", ResultKeySource.Header, "X-Model")]
    public void A_key_part_names_a_part_of_the_request(string text, ResultKeySource source, string name)
    {
        Assert.True(ResultKeyPart.TryParse(text, out ResultKeyPart part));
        Assert.Equal((source, name), (part.Source, part.Name));
    }

    [Theory]
    [InlineData("")]
    [InlineData("body:x")]
    [InlineData("query:")]
    [InlineData("route")]
    [InlineData("path:x")]
    public void A_key_part_that_names_nothing_is_not_one(string text) => Assert.False(ResultKeyPart.TryParse(text, out _));

    [Fact]
    public void A_result_reads_back_from_its_bytes_and_garbage_is_refused()
    {
        var result = new CachedResult(201, [new("content-type", "image/x-portable-pixmap"), new("x-é", "ü")], new byte[] { 1, 2, 3, 0, 255 });

        CachedResult back = CachedResult.Decode(result.Encode());

        Assert.Equal(201, back.StatusCode);
        Assert.Equal(result.Headers, back.Headers);
        Assert.Equal(result.Body.ToArray(), back.Body.ToArray());
        Assert.Throws<FormatException>(() => CachedResult.Decode("not a result"u8.ToArray()));
        Assert.Throws<FormatException>(() => CachedResult.Decode(result.Encode().AsMemory(0, 10)));
    }

    [Fact]
    public void A_local_result_lives_for_its_ttl_and_the_store_keeps_to_its_capacity()
    {
        var time = new FakeTimeProvider(DateTimeOffset.UnixEpoch);
        using var store = new LocalResultStore(100_000, time);
        var small = new CachedResult(200, [], new byte[1000]);

        store.Set("F/a", small, TimeSpan.FromSeconds(10));
        Assert.NotNull(store.Get("F/a"));
        time.Advance(TimeSpan.FromSeconds(11));
        Assert.Null(store.Get("F/a"));

        store.Set("F/huge", new CachedResult(200, [], new byte[200_000]), TimeSpan.FromMinutes(1));
        Assert.Null(store.Get("F/huge"));
        Assert.Equal((1L, 2L), (store.Hits, store.Misses));
    }
}
