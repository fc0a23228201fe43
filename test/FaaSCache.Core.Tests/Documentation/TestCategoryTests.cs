using System.Text.RegularExpressions;

namespace FaaSCache.Core.Tests.Documentation;

/// <summary>
/// <c>scripts/test.sh --fast</c> runs the tests whose class says <c>[Trait("Category", "Unit")]</c>, CI every tier: a test
/// class with no tier silently fell out of the fast run (four did), so every class with tests names one that exists.
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class TestCategoryTests
{
    private static readonly string[] Tiers = ["Unit", "Integration", "Security", "Cluster", "Reliability", "Pods"];

    [Fact]
    public void Every_test_class_names_its_tier()
    {
        string root = RepositoryRoot.Find();
        var missing = new List<string>();
        foreach (string file in Directory.EnumerateFiles(Path.Combine(root, "test"), "*.cs", SearchOption.AllDirectories)
                     .Where(f => !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                                 && !f.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal)))
        {
            string text = File.ReadAllText(file);
            if (!TestAttribute().IsMatch(text))
            {
                continue;
            }

            Match tier = CategoryTrait().Match(text);
            if (!tier.Success || !Tiers.Contains(tier.Groups[1].Value, StringComparer.Ordinal))
            {
                missing.Add($"{Path.GetRelativePath(root, file)} ({(tier.Success ? $"unknown tier '{tier.Groups[1].Value}'" : "no tier")})");
            }
        }

        Assert.True(missing.Count == 0, $"test classes without a tier among {string.Join(", ", Tiers)} (add [Trait(\"Category\", \"...\")] to the class):\n{string.Join("\n", missing)}");
    }

    [GeneratedRegex(@"\[(Fact|Theory)\b")]
    private static partial Regex TestAttribute();

    [GeneratedRegex(@"\[Trait\(""Category"", ""(\w+)""\)\]")]
    private static partial Regex CategoryTrait();
}
