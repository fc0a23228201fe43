using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

/// <summary>
/// The app-weighted statistics of the dataset's notebook (cell 10) and the paper (§2.1, §6.3), counted by
/// <see cref="TraceStatistics"/> over a generated trace of all 855 apps at 4 M accesses (the busiest apps cut down,
/// which leaves the shares of the rest as they are), each within 10% of the published value.
/// </summary>
[Trait("Category", "Unit")]
public sealed class TraceFitTests
{
    private static readonly Lazy<TraceStatistics> Counted = new(() =>
    {
        var statistics = new TraceStatistics();
        foreach (BlobAccess _ in statistics.Count(new TraceGenerator(new TraceGeneratorOptions { Accesses = 4_000_000, Seed = 3 }).Generate()))
        {
        }

        return statistics;
    });

    [Theory]
    [InlineData("below", 1.0, 0.1098)]
    [InlineData("at most", 1.0, 0.5012)]
    [InlineData("at most", 1.1, 0.6811)]
    [InlineData("at most", 100.0, 0.9229)]
    public void Invocations_per_blob_follow_fig_2(string how, double bound, double published)
    {
        double share = Counted.Value.ShareOfApps(a => how == "below" ? a.InvocationsPerBlob < bound : a.InvocationsPerBlob <= bound);

        Assert.InRange(share, published * 0.9, published * 1.1);
    }

    [Theory]
    [InlineData(1, 0.118)]
    [InlineData(100, 0.6612)]
    public void Blobs_per_app_follow_the_notebook(long most, double published)
    {
        Assert.InRange(Counted.Value.ShareOfApps(a => a.Blobs <= most), published * 0.9, published * 1.1);
    }

    [Fact]
    public void The_median_app_is_invoked_every_20_minutes_on_average()
    {
        Assert.InRange(Counted.Value.MedianAppMeanIatMinutes, 18, 22);
    }

    [Fact]
    public void Some_apps_only_read_and_others_write()
    {
        TraceStatistics s = Counted.Value;

        Assert.True(s.ShareOfApps(a => a.Writes == 0 && a.Accesses > 1) > 0.1);
        Assert.True(s.ShareOfApps(a => a.Writes > 0) > 0.3);
    }

    [Fact]
    public void Arrivals_are_bursty_not_poisson()
    {
        double[] cov = [.. Counted.Value.AppSummaries.Where(a => a.Invocations >= 20).Select(a => a.IatCov).Order()];

        // A Poisson process has a coefficient of variation of 1 between arrivals; Fig. 3 finds most blobs burstier.
        Assert.True(cov.Length > 100);
        Assert.True(cov[cov.Length / 2] > 1, $"median CoV {cov[cov.Length / 2]:F2}");
    }
}
