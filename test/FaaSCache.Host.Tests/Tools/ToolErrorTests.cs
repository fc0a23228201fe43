using FaaSCache.Host.BlobEndpoint;

namespace FaaSCache.Host.Tests.Tools;

/// <summary>
/// Issue 38: a failed <c>faascache</c> command prints one line that names what was wrong and what to do, exits 1, and
/// shows a stack trace only with <c>--verbose</c>; <c>blob ls</c> of a container that is not there says so.
/// </summary>
[Trait("Category", "Integration")]
public sealed class ToolErrorTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Storage_that_does_not_answer_is_one_line_naming_the_endpoint_and_Azurite()
    {
        int port = FreePorts.Get();
        string connection = $"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={StorageConnectionString.DevelopmentKey};BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1";

        ProcessRun run = await ToolAsync("blob", "ls", "images", "--connection", connection);

        Assert.Equal(1, run.ExitCode);
        string line = Assert.Single(run.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Contains($"127.0.0.1:{port}", line, StringComparison.Ordinal);
        Assert.Contains("azurite", line, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("   at ", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Verbose_adds_the_stack_trace_under_the_line()
    {
        ProcessRun run = await ToolAsync("blob", "ls", "images", "--connection", $"BlobEndpoint=http://127.0.0.1:{FreePorts.Get()}/devstoreaccount1;AccountName=devstoreaccount1;AccountKey={StorageConnectionString.DevelopmentKey}", "--verbose");

        Assert.Equal(1, run.ExitCode);
        Assert.StartsWith("faascache blob ls: storage does not answer", run.Stderr, StringComparison.Ordinal);
        Assert.Contains("   at ", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_connection_string_that_does_not_parse_and_a_missing_file_each_get_one_line()
    {
        ProcessRun garbage = await ToolAsync("blob", "ls", "images", "--connection", "garbage");
        string file = Path.Combine(Path.GetTempPath(), $"faascache-missing-{Guid.NewGuid():N}.txt");
        ProcessRun missing = await ToolAsync("blob", "put", "images/a.txt", file, "--connection", "UseDevelopmentStorage=true");

        Assert.Equal(1, garbage.ExitCode);
        Assert.Equal("faascache blob ls: --connection is not a storage connection string", garbage.Stderr.Split(" (", 2)[0]);
        Assert.Equal(1, missing.ExitCode);
        Assert.Equal($"faascache blob put: no such file: {file}", missing.Stderr.Trim());
    }

    internal static Task<ProcessRun> ToolAsync(params string[] args)
        => ProcessRun.RunAsync("dotnet", [FaaSCacheHostProcess.FindToolDll(), .. args], Timeout, new Dictionary<string, string> { ["AzureWebJobsStorage"] = string.Empty });
}
