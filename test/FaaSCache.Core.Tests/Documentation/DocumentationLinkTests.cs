using System.Text.RegularExpressions;

namespace FaaSCache.Core.Tests.Documentation;

/// <summary>
/// The README and docs/ are how a newcomer finds the code: every relative link in them must lead to a file or folder
/// that exists, and every <c>#anchor</c> to a heading of the page it names (GitHub's heading slugs).
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class DocumentationLinkTests
{
    private static readonly string Root = RepositoryRoot.Find();

    public static TheoryData<string> Pages()
    {
        var pages = new TheoryData<string>();
        foreach (string page in new[] { "README.md", "benchmarks/README.md", "samples/README.md" }
                     .Concat(Directory.EnumerateFiles(Path.Combine(Root, "docs"), "*.md").Select(p => Path.GetRelativePath(Root, p)).Order(StringComparer.Ordinal)))
        {
            pages.Add(page);
        }

        return pages;
    }

    [Theory]
    [MemberData(nameof(Pages))]
    public void Every_relative_link_of_the_page_resolves(string page)
    {
        string path = Path.Combine(Root, page);
        string text = File.ReadAllText(path);
        var broken = new List<string>();
        foreach (Match link in Link().Matches(StripCode(text)))
        {
            string target = link.Groups[1].Value;
            if (target.StartsWith("http://", StringComparison.Ordinal) || target.StartsWith("https://", StringComparison.Ordinal) || target.StartsWith("mailto:", StringComparison.Ordinal))
            {
                continue;
            }

            string file = target.Split('#')[0];
            string? anchor = target.Contains('#', StringComparison.Ordinal) ? target[(target.IndexOf('#', StringComparison.Ordinal) + 1)..] : null;
            string resolved = file.Length == 0 ? path : Path.GetFullPath(Path.Combine(Path.GetDirectoryName(path)!, Uri.UnescapeDataString(file)));
            if (!File.Exists(resolved) && !Directory.Exists(resolved))
            {
                broken.Add($"{target} (no such file: {Path.GetRelativePath(Root, resolved)})");
            }
            else if (anchor is not null && resolved.EndsWith(".md", StringComparison.Ordinal) && !Slugs(File.ReadAllText(resolved)).Contains(anchor))
            {
                broken.Add($"{target} (no heading with the anchor #{anchor} in {Path.GetRelativePath(Root, resolved)})");
            }
        }

        Assert.True(broken.Count == 0, $"{page} has links that lead nowhere:{Environment.NewLine}{string.Join(Environment.NewLine, broken)}");
    }

    [Theory]
    [MemberData(nameof(Pages))]
    public void The_page_names_no_file_outside_the_repository(string page)
    {
        // A fresh clone has nothing beside it: a page that sends the reader to ../shared/ sends them nowhere.
        string text = File.ReadAllText(Path.Combine(Root, page));
        string[] outside = [.. OutsidePath().Matches(text).Select(m => m.Value)];
        Assert.True(outside.Length == 0, $"{page} names files outside the repository: {string.Join(", ", outside)}");
    }

    [Fact]
    public void The_readme_stays_short_and_lists_every_page_of_docs()
    {
        string readme = File.ReadAllText(Path.Combine(Root, "README.md"));
        Assert.True(readme.Split('\n').Length < 200, $"README.md has {readme.Split('\n').Length} lines; keep it under 200 and move detail into docs/.");
        foreach (string doc in Directory.EnumerateFiles(Path.Combine(Root, "docs"), "*.md"))
        {
            Assert.Contains($"(docs/{Path.GetFileName(doc)})", readme, StringComparison.Ordinal);
        }
    }

    /// <summary>GitHub's anchors of a page's headings: lower case, punctuation but '-' and '_' dropped, spaces as '-'.</summary>
    private static HashSet<string> Slugs(string markdown)
    {
        var slugs = new HashSet<string>(StringComparer.Ordinal);
        foreach (Match heading in Heading().Matches(StripCode(markdown)))
        {
            string slug = Regex.Replace(heading.Groups[1].Value.Trim().ToLowerInvariant(), @"[^\p{L}\p{N}\s_-]", string.Empty).Replace(' ', '-');
            slugs.Add(slug);
        }

        return slugs;
    }

    /// <summary>The page without its fenced code blocks and inline code, where brackets are not links.</summary>
    private static string StripCode(string markdown) => InlineCode().Replace(Fence().Replace(markdown, string.Empty), string.Empty);

    [GeneratedRegex(@"\]\(([^)\s]+)\)")]
    private static partial Regex Link();

    [GeneratedRegex(@"^#{1,6} (.+)$", RegexOptions.Multiline)]
    private static partial Regex Heading();

    [GeneratedRegex(@"^```.*?^```", RegexOptions.Multiline | RegexOptions.Singleline)]
    private static partial Regex Fence();

    [GeneratedRegex(@"`[^`\n]*`")]
    private static partial Regex InlineCode();

    [GeneratedRegex(@"(\.\./)+shared/[\w./-]*|(?<![\w/])shared/(reference|papers)/[\w./-]*")]
    private static partial Regex OutsidePath();
}
