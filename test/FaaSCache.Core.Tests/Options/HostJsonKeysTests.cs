using System.Text.Json;

namespace FaaSCache.Core.Tests.Options;

/// <summary>
/// Issue 34: the host.json keys are one table (<see cref="HostJsonKeys"/>) from which the reader, the validator, the
/// start-up log and docs/configuration.md come; the page may not drift from the table.
/// </summary>
[Trait("Category", "Unit")]
public sealed class HostJsonKeysTests
{
    private const string Begin = "<!-- host.json keys: `faascache host-json keys` writes this table; do not edit by hand -->";
    private const string End = "<!-- end of host.json keys -->";

    [Fact]
    public void The_configuration_page_lists_every_host_json_key_as_the_table_has_it()
    {
        string page = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "configuration.md")).ReplaceLineEndings("\n");
        int begin = page.IndexOf(Begin, StringComparison.Ordinal);
        int end = page.IndexOf(End, StringComparison.Ordinal);
        Assert.True(begin >= 0 && end > begin, $"docs/configuration.md has no table between '{Begin}' and '{End}'.");

        string table = page[(begin + Begin.Length)..end].Trim('\n') + "\n";

        Assert.True(
            table == HostJsonKeys.Markdown(),
            "docs/configuration.md's host.json table differs from HostJsonKeys: replace it with the output of `faascache host-json keys`.\n" + HostJsonKeys.Markdown());
    }

    [Fact]
    public void Every_key_of_the_table_is_read_from_host_json_and_shown_in_the_start_up_log()
    {
        foreach (HostJsonKey key in HostJsonKeys.All)
        {
            string[] segments = key.Path.Split(':');
            using JsonDocument log = JsonDocument.Parse(FaaSCacheOptionsFormatter.Format(new FaaSCacheOptions()));
            JsonElement at = log.RootElement;
            foreach (string segment in segments)
            {
                Assert.True(at.TryGetProperty(segment, out at), $"the start-up log lacks '{key.Path}'");
            }
        }
    }

    [Fact]
    public void A_value_set_through_the_table_is_what_the_reader_reads_and_the_validator_accepts()
    {
        var o = FaaSCacheOptionsReader.Read(OptionsJson.Body("""
            { "consistency": "owner", "persist": "async", "eviction": { "sizeThresholdBytes": 4096, "ttl": "00:01:00" },
              "scaling": { "targetConcurrency": 3, "lowAccessRate": 0.5, "targetLatency": "00:00:00.250" },
              "membership": { "virtualNodes": 7, "watchInterval": "00:00:00" }, "sdkEndpoint": false }
            """));

        Assert.Equal(ConsistencyPreset.Owner, HostJsonKeys.Find("consistency")!.Get(o));
        Assert.Equal(PersistMode.Async, HostJsonKeys.Find("persist")!.Get(o));
        Assert.Equal(4096L, HostJsonKeys.Find("eviction:sizeThresholdBytes")!.Get(o));
        Assert.Equal(TimeSpan.FromMinutes(1), HostJsonKeys.Find("eviction:ttl")!.Get(o));
        Assert.Equal(3, HostJsonKeys.Find("scaling:targetConcurrency")!.Get(o));
        Assert.Equal(0.5, HostJsonKeys.Find("scaling:lowAccessRate")!.Get(o));
        Assert.Equal(TimeSpan.FromMilliseconds(250), HostJsonKeys.Find("scaling:targetLatency")!.Get(o));
        Assert.Equal(7, HostJsonKeys.Find("membership:virtualNodes")!.Get(o));
        Assert.Equal(TimeSpan.Zero, HostJsonKeys.Find("membership:watchInterval")!.Get(o));
        Assert.Equal(false, HostJsonKeys.Find("sdkEndpoint")!.Get(o));
        Assert.Empty(HostJsonKeys.Check(o, FaaSCacheOptionsReader.SectionPath));
    }

    [Fact]
    public void A_whole_number_past_the_range_of_its_type_is_rejected_naming_the_key()
    {
        var ex = Assert.Throws<FaaSCacheConfigurationException>(
            () => FaaSCacheOptionsReader.Read(OptionsJson.Body("""{ "membership": { "virtualNodes": 99999999999 } }""")));

        Assert.Equal("extensions:faasCache:membership:virtualNodes", ex.Key);
        Assert.Equal("99999999999", ex.Value);
        Assert.Contains("whole numbers from 1 to 10000", ex.Message, StringComparison.Ordinal);
    }
}
