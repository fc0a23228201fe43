namespace FaaSCache.Core.Tests.Options;

[Trait("Category", "Unit")]
public sealed class ConsistencyPolicyTests
{
    [Fact]
    public void The_readme_preset_table_says_what_the_policy_table_defines()
    {
        string readme = File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "README.md"));
        int start = readme.IndexOf("<!-- consistency-table:start -->", StringComparison.Ordinal);
        int end = readme.IndexOf("<!-- consistency-table:end -->", StringComparison.Ordinal);
        Assert.True(start >= 0 && end > start, "README.md has no consistency-table markers");
        List<string[]> rows = readme[start..end]
            .Split('\n')
            .Where(l => l.StartsWith("| `", StringComparison.Ordinal))
            .Select(l => l.Trim().Trim('|').Split('|').Select(c => c.Trim().Trim('`')).ToArray())
            .ToList();

        string[][] expected = [.. ConsistencyPolicy.All.Select(p => new[]
        {
            FaaSCacheOptionsRules.Name(p.Preset),
            p.WriteTarget == WriteTarget.Owner ? "owner" : "local",
            FaaSCacheOptionsRules.Name(p.DefaultPersist),
            p.ReadTarget switch { ReadTarget.StorageVersion => "storage version", ReadTarget.Owner => "owner", _ => "local" },
            p.InvalidatesOtherCopies ? "yes" : "no",
            p.Guarantee,
        })];
        Assert.Equal(expected, rows);
    }

    [Fact]
    public void Every_preset_has_exactly_one_policy_in_enum_order()
    {
        Assert.Equal(Enum.GetValues<ConsistencyPreset>(), ConsistencyPolicy.All.Select(p => p.Preset));
    }

    [Fact]
    public void Only_a_preset_that_checks_storage_versions_demands_sync_persistence()
    {
        Assert.Equal([ConsistencyPreset.Strong], ConsistencyPolicy.All.Where(p => p.AllowsOnlySyncPersist).Select(p => p.Preset));
    }
}
