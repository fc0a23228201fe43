using FaaSCache.Simulation.Engine;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class LatencyModelTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("faascache-lat-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void A_curve_interpolates_linearly_in_size_and_extends_the_last_slope()
    {
        var curve = new LatencyCurve([(1_000, 100), (3_000, 300)]);

        Assert.Equal(100, curve.Micros(10));
        Assert.Equal(200, curve.Micros(2_000));
        Assert.Equal(500, curve.Micros(5_000));
    }

    [Fact]
    public void The_model_reads_the_benchmark_CSVs_and_strong_adds_the_version_check_to_remote_hits()
    {
        File.WriteAllText(Path.Combine(_dir, LatencyModel.CacheletReadFile), """
            path,size_bytes,p50_us,p99_us,n
            lh,1024,0.1,1,10
            lh_strong,1024,600,900,10
            lm,1024,900,1000,10
            storage_direct,1024,700,800,10
            conditional_head,1024,50,80,10
            """);
        File.WriteAllText(Path.Combine(_dir, LatencyModel.RemoteReadFile), """
            path,size_bytes,p50_us,p99_us,n
            rh,1024,300,400,10
            rm,1024,1300,1500,10
            """);

        LatencyModel strong = LatencyModel.Load(_dir, strongConsistency: true);
        LatencyModel owner = LatencyModel.Load(_dir, strongConsistency: false);

        Assert.Equal((600, 900, 350, 1300, 700), (strong.LocalHit.Micros(1024), strong.LocalMiss.Micros(1024), strong.RemoteHit.Micros(1024), strong.RemoteMiss.Micros(1024), strong.Storage.Micros(1024)));
        Assert.Equal((0.1, 300), (owner.LocalHit.Micros(1024), owner.RemoteHit.Micros(1024)));
    }

    [Fact]
    public void A_missing_benchmark_CSV_is_an_error_naming_the_file_and_its_benchmark()
    {
        var e = Assert.Throws<FileNotFoundException>(() => LatencyModel.Load(_dir, strongConsistency: true));

        Assert.Contains(LatencyModel.CacheletReadFile, e.Message, StringComparison.Ordinal);
        Assert.Contains("benchmarks/run cachelet-read", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_repositorys_own_results_load()
    {
        string results = Path.Combine(FaaSCache.Testing.RepositoryRoot.Find(), "benchmarks", "results");

        LatencyModel model = LatencyModel.Load(results, strongConsistency: true);

        Assert.True(model.LocalHit.Micros(1024) < model.Storage.Micros(16 << 20));
    }

    [Fact]
    public void With_a_storage_profile_storage_costs_come_from_it_and_the_caches_own_from_the_CSVs()
    {
        WriteOneMegabyteResults();
        var profile = new FaaSCache.Storage.StorageProfile { Name = "far", FirstByteMs = 10, VersionCheckMs = 5, WriteMs = 10, BandwidthBytesPerSecond = 100e6 };

        LatencyModel strong = LatencyModel.Load(_dir, strongConsistency: true, profile);

        // Storage: 10 ms + 1 MB at 100 MB/s = 20 ms; a miss adds the cache's own 0.5 ms; a strong hit the profile's 5 ms
        // version check; a remote miss the longer of the read and the remote hit, plus the 1 ms the owner's pipe adds.
        Assert.Equal("far", strong.Profile);
        Assert.Equal(20_000, strong.Storage.Micros(1_000_000), 3);
        Assert.Equal(20_500, strong.LocalMiss.Micros(1_000_000), 3);
        Assert.Equal(5_000.1, strong.LocalHit.Micros(1_000_000), 3);
        Assert.Equal(6_000, strong.RemoteHit.Micros(1_000_000), 3);
        Assert.Equal(21_000, strong.RemoteMiss.Micros(1_000_000), 3);
        Assert.Null(LatencyModel.ProfileNamed("measured"));
        Assert.Same(FaaSCache.Storage.StorageProfile.Paper, LatencyModel.ProfileNamed("paper"));

        // §6.1's reading, a miss as vanilla: the overheads go, the hits stay.
        LatencyModel vanilla = LatencyModel.Load(_dir, strongConsistency: true, profile, missOverhead: false);
        Assert.Equal(20_000, vanilla.LocalMiss.Micros(1_000_000), 3);
        Assert.Equal(20_000, vanilla.RemoteMiss.Micros(1_000_000), 3);
        Assert.Equal(5_000.1, vanilla.LocalHit.Micros(1_000_000), 3);

        // The version check measured here as a fraction of a first byte: 500 / 2000 at the one size both rows have.
        Assert.Equal(0.25, LatencyModel.MeasuredVersionCheckFraction(_dir), 6);
    }

    [Fact]
    public void The_pricings_put_the_papers_reading_first_and_price_the_version_check_at_each_sensitivity_point_under_the_bound()
    {
        // Measured: a check is 0.25 of a first byte, 2.5 ms at the paper's 10 ms: the 2.5 ms row stands for it.
        IReadOnlyList<Pricing> all = Pricing.All(measuredCheckFraction: 0.25, measuredCheckMs: 0.5);

        Assert.Equal(Pricing.PaperStrong, all[0]);
        Assert.Equal(
            ["paper, strong, check 5 ms", "paper, strong, check 1 ms", "paper, strong, check 2.5 ms", "paper, owner", "paper, strong, check 5 ms, miss = vanilla", "paper, owner, miss = vanilla", "measured, strong", "measured, owner"],
            all.Select(p => p.Label));

        // A check measured at 0.3 of a first byte is a row of its own (3 ms); one at or above the bound is not.
        Assert.Contains(Pricing.All(0.3, 0.5), p => p.Profile == "paper" && p.VersionCheckMs == 3);
        Assert.Equal(all.Count, Pricing.All(0.72, 0.8).Count);

        WriteOneMegabyteResults();
        LatencyModel oneMs = new Pricing("paper", "strong", 1).Load(_dir);
        LatencyModel owner = new Pricing("paper", "owner", 0).Load(_dir);
        Assert.Equal(1_000.1, oneMs.LocalHit.Micros(1_000_000), 3);
        Assert.Equal(0.1, owner.LocalHit.Micros(1_000_000), 3);
    }

    /// <summary>Both benchmark CSVs with one size, 1 MB: storage 2 ms, a miss 0.5 ms more, a check 0.5 ms, a remote hit 1 ms, a remote miss 3 ms.</summary>
    private void WriteOneMegabyteResults()
    {
        File.WriteAllText(Path.Combine(_dir, LatencyModel.CacheletReadFile), """
            path,size_bytes,p50_us,p99_us,n
            lh,1000000,0.1,1,10
            lh_strong,1000000,600,900,10
            lm,1000000,2500,3000,10
            storage_direct,1000000,2000,2600,10
            conditional_head,1000000,500,800,10
            """);
        File.WriteAllText(Path.Combine(_dir, LatencyModel.RemoteReadFile), """
            path,size_bytes,p50_us,p99_us,n
            rh,1000000,1000,1400,10
            rm,1000000,3000,3500,10
            """);
    }
}
