using FaaSCache.Simulation.Engine;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class LatencyModelTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("faascache-lat-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void ACurveInterpolatesLinearlyInSizeAndExtendsTheLastSlope()
    {
        var curve = new LatencyCurve([(1_000, 100), (3_000, 300)]);

        Assert.Equal(100, curve.Micros(10));
        Assert.Equal(200, curve.Micros(2_000));
        Assert.Equal(500, curve.Micros(5_000));
    }

    [Fact]
    public void TheModelReadsTheBenchmarkCsvsAndStrongAddsTheVersionCheckToRemoteHits()
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
    public void AMissingBenchmarkCsvIsAnErrorNamingTheFileAndItsBenchmark()
    {
        var e = Assert.Throws<FileNotFoundException>(() => LatencyModel.Load(_dir, strongConsistency: true));

        Assert.Contains(LatencyModel.CacheletReadFile, e.Message, StringComparison.Ordinal);
        Assert.Contains("benchmarks/run cachelet-read", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TheRepositorysOwnResultsLoad()
    {
        string results = Path.Combine(FaaSCache.TestSupport.RepositoryRoot.Find(), "benchmarks", "results");

        LatencyModel model = LatencyModel.Load(results, strongConsistency: true);

        Assert.True(model.LocalHit.Micros(1024) < model.Storage.Micros(16 << 20));
    }
}
