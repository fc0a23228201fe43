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
    public async Task A_trace_survives_a_write_and_read_round_trip(string name)
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
    public async Task A_CSV_without_a_required_column_is_rejected_naming_it()
    {
        string path = Path.Combine(_dir, "bad.csv");
        await File.WriteAllTextAsync(path, "Timestamp,AnonAppName\n1,a\n");

        var e = await Assert.ThrowsAsync<FormatException>(async () => await TraceFile.ReadAsync(path).ToListAsync());

        Assert.Contains("AnonBlobName", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_summary_CSV_round_trips_with_hybrid_for_rows_the_hybrid_histogram_kept_alive()
    {
        string path = Path.Combine(_dir, "simulate.csv");
        var policy = new PolicySet { CapacityBytes = 128L << 20, Prewarm = true };
        var hourly = new PolicySet { CapacityBytes = 128L << 20, UnloadAfterIdle = TimeSpan.FromHours(1) };
        var halfMinute = new PolicySet { CapacityBytes = 128L << 20, UnloadAfterIdle = TimeSpan.FromSeconds(30) };
        SummaryCsv.Write(
            path,
            [
                (new Pricing("measured", "strong", 0.82), [new PolicySummary(policy, 10, -3.5, -1.25, 0.05, 0.6)]),
                (Pricing.PaperStrong, [new PolicySummary(policy, 10, 41.25, 38.5, 0.35, 0.6), new PolicySummary(hourly, 10, 20, 10, 0.1, 0.5)]),
                (new Pricing("paper", "owner", 0, MissOverhead: false), [new PolicySummary(halfMinute, 10, 12, 6, 0.02, 0.4)]),
            ],
            TimeSpan.FromMinutes(10));

        var rows = SummaryCsv.Read(path);

        Assert.Equal(SummaryCsv.Header, File.ReadLines(path).First());
        Assert.EndsWith(",0.3500,hybrid,strong,5,measured", File.ReadLines(path).ElementAt(2), StringComparison.Ordinal);
        Assert.Equal(
            [
                new SummaryRow("measured", 128L, true, -3.5, -1.25, 0.05, null, "strong", 0.82, "measured"),
                new SummaryRow("paper", 128L, true, 41.25, 38.5, 0.35, null, "strong", 5, "measured"),
                new SummaryRow("paper", 128L, false, 20.0, 10.0, 0.1, 60.0, "strong", 5, "measured"),
                new SummaryRow("paper", 128L, false, 12.0, 6.0, 0.02, 0.5, "owner", 0, "vanilla"),
            ],
            rows);
    }
}
