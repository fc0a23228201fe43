namespace FaaSCache.Host.Tests.Tools;

/// <summary>
/// Issue 38: <c>faascache host-json set</c> takes JSON values (null, numbers, arrays) and refuses, leaving the file as it
/// was, what the host would refuse when it reads extensions.faasCache.
/// </summary>
[Trait("Category", "Integration")]
public sealed class HostJsonSetTests : IDisposable
{
    private const string Original = """{ "version": "2.0", "extensions": { "faasCache": { "consistency": "strong" } } }""";
    private readonly TempFolder _folder = new("faascache-host-json-");

    private string HostJson => Path.Combine(_folder.Path, "host.json");

    public HostJsonSetTests() => File.WriteAllText(HostJson, Original);

    [Theory]
    [InlineData("extensions.faasCache.consistency", "fast", "consistency")]
    [InlineData("extensions.faasCache.capacityBytes", "-5", "capacityBytes")]
    [InlineData("extensions.faasCache.noSuchKey", "1", "noSuchKey")]
    public async Task A_value_the_host_would_refuse_is_refused_naming_the_key_and_the_file_is_unchanged(string path, string value, string named)
    {
        ProcessRun run = await ToolErrorTests.ToolAsync("host-json", "set", HostJson, path, value);

        Assert.Equal(1, run.ExitCode);
        Assert.Contains(named, run.Stderr, StringComparison.Ordinal);
        Assert.Contains("unchanged", run.Stderr, StringComparison.Ordinal);
        Assert.Equal(Original, File.ReadAllText(HostJson));
    }

    [Fact]
    public async Task Null_and_arrays_are_written_as_JSON_and_read_back_by_the_host()
    {
        ProcessRun ttl = await ToolErrorTests.ToolAsync("host-json", "set", HostJson, "extensions.faasCache.eviction.ttl", "null");
        ProcessRun skip = await ToolErrorTests.ToolAsync("host-json", "set", HostJson, "extensions.faasCache.doNotCache", """["logs/*","tmp/*"]""");

        Assert.True(ttl.ExitCode == 0, ttl.ToString());
        Assert.True(skip.ExitCode == 0, skip.ToString());
        using var written = JsonDocument.Parse(File.ReadAllText(HostJson));
        JsonElement section = written.RootElement.GetProperty("extensions").GetProperty("faasCache");
        Assert.Equal(JsonValueKind.Null, section.GetProperty("eviction").GetProperty("ttl").ValueKind);
        Assert.Equal(["logs/*", "tmp/*"], section.GetProperty("doNotCache").EnumerateArray().Select(e => e.GetString()));
        FaaSCacheOptions read = FaaSCacheOptionsReader.ReadHostJson(HostJson);
        Assert.Null(read.Eviction.Ttl);
        Assert.Equal(["logs/*", "tmp/*"], read.DoNotCache);
    }

    public void Dispose() => _folder.Dispose();
}
