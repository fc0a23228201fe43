using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class TraceGeneratorTests
{
    private static readonly TraceGeneratorOptions Small = new() { Accesses = 200_000, Apps = 60, Seed = 7 };

    [Fact]
    public void The_same_seed_gives_the_same_trace_row_for_row()
    {
        var a = new TraceGenerator(Small).Generate().ToList();
        var b = new TraceGenerator(Small).Generate().ToList();

        Assert.Equal(a.Count, b.Count);
        Assert.Equal(a, b);
    }

    [Fact]
    public void Another_seed_gives_another_trace()
    {
        var a = new TraceGenerator(Small).Generate().Take(5_000).ToList();
        var b = new TraceGenerator(Small with { Seed = 8 }).Generate().Take(5_000).ToList();

        Assert.NotEqual(a, b);
    }

    [Fact]
    public void App_rows_are_contiguous_and_in_time_order_and_sum_to_the_requested_count()
    {
        var rows = new TraceGenerator(Small).Generate().ToList();
        var seen = new HashSet<string>();
        string? current = null;
        long last = long.MinValue;
        foreach (BlobAccess row in rows)
        {
            if (row.AppName != current)
            {
                Assert.True(seen.Add(row.AppName), $"app {row.AppName} appears twice");
                current = row.AppName;
                last = long.MinValue;
            }

            Assert.True(row.TimestampMs >= last);
            last = row.TimestampMs;
        }

        Assert.Equal(Small.Apps, seen.Count);
        Assert.InRange(rows.Count, Small.Accesses - Small.Apps, Small.Accesses + Small.Apps);
    }

    [Fact]
    public void Read_share_matches_the_trace()
    {
        var rows = new TraceGenerator(Small).Generate().ToList();

        double reads = rows.Count(r => r.IsRead) / (double)rows.Count;

        Assert.InRange(reads, AzureTraceShape.ReadShare - 0.01, AzureTraceShape.ReadShare + 0.01);
        Assert.All(rows, r => Assert.NotEqual(r.IsRead, r.IsWrite));
    }

    [Theory]
    [InlineData(0.10, 46)]
    [InlineData(0.25, 542)]
    [InlineData(0.50, 5_300)]
    [InlineData(0.75, 9_200)]
    [InlineData(0.90, 26_800)]
    [InlineData(0.95, 111_000)]
    [InlineData(0.99, 1_590_000)]
    public void Blob_size_percentiles_match_the_published_ones(double p, double expected)
    {
        var generator = new TraceGenerator(new TraceGeneratorOptions { Seed = 3 });
        double[] sizes = [.. Enumerable.Range(0, 100_000).Select(i => generator.BlobSize(i % 50, i)).Order()];

        double measured = sizes[(int)(p * sizes.Length)];

        Assert.InRange(measured, expected * 0.9, expected * 1.1);
        Assert.True(sizes[^1] <= 1.91e9);
    }

    [Fact]
    public void A_third_of_the_apps_reuse_a_blob_across_invocations_and_the_others_never_do()
    {
        var options = new TraceGeneratorOptions { Accesses = 400_000, Apps = 400, Seed = 11 };
        List<BlobAccess> rows = [.. new TraceGenerator(options).Generate()];
        var statistics = new TraceStatistics();

        var apps = statistics.Count(rows).GroupBy(r => r.AppName)
            .Select(g => (Ratio: (double)g.Select(r => r.InvocationId).Distinct().Count() / g.Select(r => r.BlobName).Distinct().Count(),
                          Reuses: g.GroupBy(r => r.BlobName).Any(b => b.Select(r => r.InvocationId).Distinct().Count() > 1)))
            .ToList();

        // §2.1: more than 32.0% of apps access a blob in more than one invocation, 7.7% in more than 100 (Fig. 2: <= 100 for 92.3%).
        Assert.InRange(statistics.ReuseShare, 0.29, 0.33);
        Assert.InRange(apps.Count(a => a.Ratio <= 100) / (double)apps.Count, 0.89, 0.95);
        // An app at or below one invocation per blob gives each invocation blobs of its own.
        Assert.DoesNotContain(apps, a => a.Ratio <= 1 && a.Reuses);
    }

    [Fact]
    public void The_popular_blobs_of_a_reusing_app_are_its_small_ones_and_keep_the_percentiles()
    {
        var generator = new TraceGenerator(new TraceGeneratorOptions { Seed = 3 });
        double[] sizes = [.. Enumerable.Range(0, 100_000).Select(rank => generator.BlobSize(7, rank, 100_000))];

        Assert.True(sizes[0] <= sizes[50_000] && sizes[50_000] <= sizes[99_000]);
        Assert.InRange(sizes.Order().ElementAt(50_000), 5_300 * 0.9, 5_300 * 1.1);
        Assert.InRange(sizes.Order().ElementAt(99_000), 1_590_000 * 0.9, 1_590_000 * 1.1);
    }

    [Fact]
    public void Most_apps_are_invoked_less_than_once_a_minute_at_full_scale()
    {
        long[] perApp = new TraceGenerator(new TraceGeneratorOptions()).AccessesPerApp();
        double accessesPerInvocation = (double)AzureTraceShape.Accesses / AzureTraceShape.Invocations;

        double rare = perApp.Count(a => a / accessesPerInvocation < AzureTraceShape.Days * 24 * 60) / (double)perApp.Length;

        // §2.1: 80% of functions are invoked less than once a minute.
        Assert.InRange(rare, 0.72, 0.88);
        Assert.InRange(perApp.Sum(), AzureTraceShape.Accesses - AzureTraceShape.Apps, AzureTraceShape.Accesses + AzureTraceShape.Apps);
    }

    [Fact]
    public void Capped_apps_keep_the_cap_and_the_rest_share_the_total()
    {
        var options = new TraceGeneratorOptions { Accesses = 1_000_000, Apps = 100, MaxAccessesPerApp = 50_000, Seed = 5 };

        long[] perApp = new TraceGenerator(options).AccessesPerApp();

        Assert.All(perApp, n => Assert.InRange(n, 1, 50_000));
        Assert.InRange(perApp.Sum(), 990_000, 1_010_000);
    }

    [Fact]
    public void An_out_of_range_option_is_named()
    {
        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new TraceGenerator(new TraceGeneratorOptions { Apps = 0 }));

        Assert.StartsWith("TraceGeneratorOptions.Apps is 0", Assert.Single(e.Failures), StringComparison.Ordinal);
    }
}
