namespace FaaSCache.Host.Tests.Tools;

/// <summary>
/// Issue 38: docs/commands.md lists every <c>faascache</c> command and option as the tool's own help prints them
/// (<c>scripts/commands-doc.sh</c> writes it); the page may not drift from the command line.
/// </summary>
[Trait("Category", "Integration")]
public sealed class CommandReferenceTests
{
    [Fact]
    public async Task The_commands_page_is_what_the_tool_prints_today()
    {
        string root = RepositoryRoot.Find();
        ProcessRun run = await ProcessRun.RunAsync(
            "bash",
            [Path.Combine(root, "scripts", "commands-doc.sh"), "-"],
            TimeSpan.FromMinutes(3),
            new Dictionary<string, string> { ["FAASCACHE_TOOL_DLL"] = FaaSCacheHostProcess.FindToolDll() });

        Assert.True(run.ExitCode == 0, run.ToString());
        string page = await File.ReadAllTextAsync(Path.Combine(root, "docs", "commands.md"));
        Assert.True(
            page.ReplaceLineEndings() == run.Stdout.ReplaceLineEndings(),
            "docs/commands.md differs from the tool's help: run `bash scripts/commands-doc.sh` and commit the page.");
        foreach (string command in new[] { "start", "blob put", "host-json set", "what-if", "kubernetes manifests" })
        {
            Assert.Contains($"## faascache {command}", page, StringComparison.Ordinal);
        }
    }
}
