using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class AppGroupingTests
{
    [Fact]
    public void Each_app_becomes_one_trace_with_all_its_rows()
    {
        var rows = new TraceGenerator(new TraceGeneratorOptions { Accesses = 20_000, Apps = 5 }).Generate().ToList();

        var apps = AppGrouping.Group(rows).ToList();

        Assert.Equal(5, apps.Count);
        Assert.Equal(rows.Count, apps.Sum(a => a.Count));
    }

    [Fact]
    public void Rows_of_an_app_that_are_not_contiguous_are_rejected_naming_the_app()
    {
        BlobAccess Row(string app) => new(0, "r", "u", app, "i", "b", "BlockBlob", "e", 1, true, false);

        var e = Assert.Throws<InvalidDataException>(() => AppGrouping.Group([Row("a"), Row("b"), Row("a")]).ToList());

        Assert.Contains("'a'", e.Message, StringComparison.Ordinal);
    }
}
