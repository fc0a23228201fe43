using System.CommandLine;
using System.Text.RegularExpressions;

namespace FaaSCache.Host.Tests.Tools;

/// <summary>
/// Issue 38: the commands the README and the docs show run as written. Every <c>faascache</c> line of their command
/// blocks parses with the tool's own command line; every <c>bash scripts/...</c> line names a script that exists and
/// options it takes; every <c>benchmarks/run</c> line names a benchmark <c>benchmarks/run</c> knows and options it takes.
/// (What they do is the samples', scripts' and benchmarks' own tests'.)
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class DocumentedCommandTests
{
    private static readonly string Root = RepositoryRoot.Find();

    public static TheoryData<string, string> Commands()
    {
        var commands = new TheoryData<string, string>();
        IEnumerable<string> pages = new[] { "README.md", "samples/README.md", "benchmarks/README.md" }
            .Concat(Directory.EnumerateFiles(Path.Combine(Root, "docs"), "*.md").Select(p => Path.GetRelativePath(Root, p)))
            .Concat(Directory.EnumerateFiles(Path.Combine(Root, "deploy"), "README.md", SearchOption.AllDirectories).Select(p => Path.GetRelativePath(Root, p)))
            .Where(p => p != Path.Combine("docs", "commands.md"))
            .Order(StringComparer.Ordinal);
        foreach (string page in pages)
        {
            // A line shown twice on a page (after its `cd` is cut) is one case: xunit skips duplicate cases noisily.
            foreach (string command in CommandLines(File.ReadAllText(Path.Combine(Root, page))).Distinct(StringComparer.Ordinal))
            {
                commands.Add(page, command);
            }
        }

        return commands;
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public void The_command_runs_as_written(string page, string command)
    {
        string[] words = Words(command);
        switch (words[0])
        {
            case "faascache":
                ParseResult parsed = FaaSCache.Tools.Program.CreateRoot().Parse(words[1..]);
                Assert.True(parsed.Errors.Count == 0, $"{page}: `{command}` does not parse: {string.Join("; ", parsed.Errors.Select(e => e.Message))}");
                break;
            case "bash":
                string script = Path.Combine(Root, words[1]);
                Assert.True(File.Exists(script), $"{page}: `{command}` names {words[1]}, which does not exist");
                // scale.sh hands its options on to the scale controller.
                string takes = File.ReadAllText(script) + (words[1] == "scripts/scale.sh"
                    ? string.Concat(Directory.EnumerateFiles(Path.Combine(Root, "src", "ScaleController", "FaaSCache.ScaleController", "Options"), "*.cs").Select(File.ReadAllText))
                    : string.Empty);
                AssertOptionsKnown(page, command, words[2..], takes);
                break;
            default:
                string run = File.ReadAllText(Path.Combine(Root, "benchmarks", "run"));
                string[] rest = words[1..];
                if (rest.Length > 0 && !rest[0].StartsWith('-'))
                {
                    Assert.True(run.Contains($"\"{rest[0]}|", StringComparison.Ordinal), $"{page}: `{command}` names benchmark '{rest[0]}', which benchmarks/run does not list");
                }

                AssertOptionsKnown(page, command, rest, run + string.Concat(Directory.EnumerateFiles(Path.Combine(Root, "benchmarks", "FaaSCache.Benchmarks"), "*.cs").Select(File.ReadAllText)));
                break;
        }
    }

    /// <summary>The command lines of a page's fenced blocks: comments and prompts cut, continuations joined, placeholders left out.</summary>
    internal static IEnumerable<string> CommandLines(string markdown)
    {
        bool inBlock = false;
        string pending = string.Empty;
        foreach (string raw in markdown.ReplaceLineEndings("\n").Split('\n'))
        {
            if (raw.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                inBlock = !inBlock;
                pending = string.Empty;
                continue;
            }

            if (!inBlock)
            {
                continue;
            }

            string line = pending + Comment().Replace(raw, string.Empty).Trim();
            if (line.EndsWith('\\'))
            {
                pending = line[..^1] + " ";
                continue;
            }

            pending = string.Empty;
            line = CdPrefix().Replace(line, string.Empty);
            // The command itself: what a pipe, a redirection or a next command does is the shell's.
            line = Chained().Replace(line, string.Empty).Trim();
            if (CommandStart().IsMatch(line) && !line.Contains('<', StringComparison.Ordinal) && !line.Contains('[', StringComparison.Ordinal) && !line.Contains('$', StringComparison.Ordinal))
            {
                yield return line;
            }
        }
    }

    private static void AssertOptionsKnown(string page, string command, string[] arguments, string source)
    {
        foreach (string option in arguments.Where(a => a.StartsWith("--", StringComparison.Ordinal)).Select(a => a.Split('=')[0]))
        {
            Assert.True(source.Contains(option, StringComparison.Ordinal), $"{page}: `{command}` passes {option}, which it does not take");
        }
    }

    private static string[] Words(string command) => [.. WordPattern().Matches(command).Select(m => m.Groups[1].Success ? m.Groups[1].Value : m.Groups[2].Success ? m.Groups[2].Value : m.Value)];

    [GeneratedRegex(@"\s+#.*$")]
    private static partial Regex Comment();

    [GeneratedRegex(@"\s(\||&&|;|>|2>).*$")]
    private static partial Regex Chained();

    [GeneratedRegex(@"^cd \S+ && ")]
    private static partial Regex CdPrefix();

    [GeneratedRegex(@"^(faascache |bash scripts/|benchmarks/run\b)")]
    private static partial Regex CommandStart();

    [GeneratedRegex(@"""([^""]*)""|'([^']*)'|\S+")]
    private static partial Regex WordPattern();
}
