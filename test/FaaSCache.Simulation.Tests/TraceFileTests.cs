using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class TraceFileTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("faascache-sim-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Theory]
    [InlineData("trace.csv")]
    [InlineData("trace.parquet")]
    public async Task ATraceSurvivesAWriteAndReadRoundTrip(string name)
    {
        string path = Path.Combine(_dir, name);
        var rows = new TraceGenerator(new TraceGeneratorOptions { Accesses = 30_000, Apps = 10, Seed = 2 }).Generate().ToList();

        long written = await TraceFile.WriteAsync(path, rows);
        var back = new List<BlobAccess>();
        await foreach (BlobAccess row in TraceFile.ReadAsync(path))
        {
            back.Add(row);
        }

        Assert.Equal(rows.Count, written);
        Assert.Equal(rows, back);
    }

    [Fact]
    public async Task ACsvWithoutARequiredColumnIsRejectedNamingIt()
    {
        string path = Path.Combine(_dir, "bad.csv");
        await File.WriteAllTextAsync(path, "Timestamp,AnonAppName\n1,a\n");

        var e = await Assert.ThrowsAsync<FormatException>(async () => await TraceFile.ReadAsync(path).ToListAsync());

        Assert.Contains("AnonBlobName", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TheSummaryCsvRoundTrips()
    {
        string path = Path.Combine(_dir, "simulate.csv");
        var policy = new PolicySet { CapacityBytes = 128L << 20, Prewarm = true };
        SummaryCsv.Write(path, [new PolicySummary(policy, 10, 41.25, 38.5, 0.35, 0.6)]);

        var rows = SummaryCsv.Read(path);

        Assert.Equal(SummaryCsv.Header, File.ReadLines(path).First());
        Assert.Equal([(128L, true, 41.25, 38.5, 0.35)], rows);
    }
}
