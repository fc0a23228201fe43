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
        Assert.InRange(rows.Count, Small.Accesses * 0.99, Small.Accesses * 1.01);
        Assert.All(rows, r => Assert.InRange(r.TimestampMs, AzureTraceShape.StartUnixMs, AzureTraceShape.StartUnixMs + (Small.Days * 86_400_000L)));
    }

    [Fact]
    public void Read_share_matches_the_trace()
    {
        var rows = new TraceGenerator(Small).Generate().ToList();

        double reads = rows.Count(r => r.IsRead) / (double)rows.Count;

        Assert.InRange(reads, AzureTraceShape.ReadShare - 0.01, AzureTraceShape.ReadShare + 0.01);
        Assert.All(rows, r => Assert.NotEqual(r.IsRead, r.IsWrite));
    }

    [Fact]
    public void Every_blob_version_has_its_own_etag_and_every_write_makes_a_new_one()
    {
        var owner = new Dictionary<string, (string App, string Blob)>();
        var current = new Dictionary<(string App, string Blob), string>();

        foreach (BlobAccess row in new TraceGenerator(Small).Generate())
        {
            if (owner.TryGetValue(row.ETag, out var blob))
            {
                // An ETag seen before names the same blob, is no write (a write makes a new version) and is its current one.
                Assert.Equal((row.AppName, row.BlobName), blob);
                Assert.False(row.IsWrite, $"write of {row.BlobName} reused ETag {row.ETag}");
                Assert.Equal(current[blob], row.ETag);
            }
            else
            {
                owner[row.ETag] = (row.AppName, row.BlobName);
                Assert.True(row.IsWrite || !current.ContainsKey((row.AppName, row.BlobName)), $"a read of {row.BlobName} saw a version nobody wrote");
            }

            current[(row.AppName, row.BlobName)] = row.ETag;
        }

        Assert.True(owner.Count > 1_000);
    }

    [Fact]
    public void The_full_size_plan_has_the_published_totals_and_app_weighted_shares()
    {
        IReadOnlyList<AppPlan> plans = new TraceGenerator(new TraceGeneratorOptions()).Plans;
        double Share(Func<AppPlan, bool> p) => plans.Count(p) / (double)plans.Count;
        long[] busiest = [.. plans.Select(a => a.Invocations).OrderDescending()];
        long total = busiest.Sum();
        int carrying = busiest.Select((v, k) => (v, k)).First(x => busiest.Take(x.k + 1).Sum() >= 0.99 * total).k + 1;
        double[] iat = [.. plans.Where(a => a.Invocations > 1).Select(a => a.MeanIatMs).Order()];

        Assert.Equal(AzureTraceShape.Apps, plans.Count);
        Assert.InRange(plans.Sum(a => a.Accesses), AzureTraceShape.Accesses * 0.99, AzureTraceShape.Accesses * 1.01);
        Assert.InRange(total, AzureTraceShape.Invocations * 0.95, AzureTraceShape.Invocations * 1.05);
        Assert.InRange(plans.Sum(a => a.Blobs), AzureTraceShape.Blobs * 0.9, AzureTraceShape.Blobs * 1.1);
        Assert.InRange(Share(a => a.InvocationsPerBlob < 1), 0.1098 * 0.9, 0.1098 * 1.1);
        Assert.InRange(Share(a => a.InvocationsPerBlob <= 1), 0.5012 * 0.9, 0.5012 * 1.1);
        Assert.InRange(Share(a => a.Blobs == 1), 0.118 * 0.9, 0.118 * 1.1);
        Assert.InRange(Share(a => a.Blobs <= 10_000), 0.9299 * 0.9, 0.9299 * 1.1);
        Assert.InRange(plans.Max(a => a.Blobs), 8_137_406 * 0.9, 8_137_406);
        // §2.1: fewer than 15% of apps carry 99% of the invocations.
        Assert.True(carrying < 0.15 * plans.Count, $"{carrying} apps carry 99% of the invocations");
        Assert.InRange(iat[iat.Length / 2] / 60_000, 18, 22);
    }

    [Fact]
    public void Apps_beyond_the_cap_are_cut_to_it_and_the_rest_keep_their_counts()
    {
        var options = new TraceGeneratorOptions { Accesses = 1_000_000, Apps = 100, MaxAccessesPerApp = 50_000, Seed = 5 };

        IReadOnlyList<AppPlan> plans = new TraceGenerator(options).Plans;

        Assert.All(plans, a => Assert.InRange(a.Accesses, Math.Max(a.Invocations, a.Blobs), 50_000));
        Assert.All(plans, a => Assert.InRange(a.Writes, 0, a.Invocations > a.Blobs ? a.Blobs - 1 : a.Blobs));
        Assert.InRange(plans.Sum(a => a.Accesses), 990_000, 1_010_000);
    }

    [Fact]
    public void An_out_of_range_option_is_named()
    {
        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new TraceGenerator(new TraceGeneratorOptions { Apps = 0 }));

        Assert.StartsWith("TraceGeneratorOptions.Apps is 0", Assert.Single(e.Failures), StringComparison.Ordinal);
    }
}
