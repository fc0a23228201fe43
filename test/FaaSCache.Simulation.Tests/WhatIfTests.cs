using FaaSCache.Options;
using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;
using FaaSCache.Simulation.WhatIf;
using static FaaSCache.Simulation.Tests.HandTrace;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class WhatIfTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("faascache-whatif-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public async Task An_hourly_app_with_a_reused_model_is_best_served_with_prewarm()
    {
        // An hourly job reads the same model and writes a new result each time: only pre-warm keeps the model across unloads.
        var rows = Enumerable.Range(0, 24).SelectMany(h => new[] { Read(h * 60, h, "model", 40_000_000), Write((h * 60) + 1, h, "out-" + h, 2_000) }).ToList();
        string log = Path.Combine(_dir, "log.csv");
        await CsvTrace.WriteAsync(log, rows);

        AppTrace trace = await WhatIfReport.LoadAppAsync(log, appName: null);
        IReadOnlyList<WhatIfOutcome> ranking = WhatIfAnalyzer.Rank(trace, WhatIfAnalyzer.DefaultGrid(), Latency, new SimulationOptions());
        var output = new StringWriter();
        WhatIfReport.Write(output, trace, AppLayout.For(trace, 1), ranking, top: 5);

        WhatIfOutcome winner = ranking[0];
        Assert.True(winner.Policy.Prewarm);
        // The 40 MB model does not fit 32 MB; the larger caches tie, and the smallest of them wins.
        Assert.Equal(128L << 20, winner.Policy.CapacityBytes);
        Assert.Equal((EvictionPolicy.Lru, null), (winner.Policy.Eviction.Policy, winner.Policy.Eviction.Ttl));
        // Hour 0 misses. With pre-warm the hybrid histogram keeps the app for its 4-hour range while it has fewer than 10
        // idle times (hours 1..10 hit the kept copy), then unloads it after each hour and loads it again, pre-warmed, at
        // 54 minutes (hours 11..23 hit the pre-warmed copy); without pre-warm every hour is unloaded after 10 minutes.
        Assert.Equal(23, winner.Result.LocalHits);
        Assert.Equal(13, winner.Result.Prewarmed);
        Assert.Contains("\"prewarm\": { \"enabled\": true", output.ToString(), StringComparison.Ordinal);
        Assert.Contains("winner:", output.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_log_with_several_apps_needs_one_named()
    {
        string log = Path.Combine(_dir, "two.csv");
        await CsvTrace.WriteAsync(log, new TraceGenerator(new TraceGeneratorOptions { Accesses = 2_000, Apps = 2 }).Generate());

        var e = await Assert.ThrowsAsync<InvalidDataException>(() => WhatIfReport.LoadAppAsync(log, appName: null));

        Assert.Contains("--app", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_grid_covers_every_knob()
    {
        IReadOnlyList<PolicySet> grid = WhatIfAnalyzer.DefaultGrid();

        Assert.Equal(4 * 4 * 3 * 2, grid.Count);
        Assert.Contains(grid, p => p.Eviction.Policy == EvictionPolicy.Size && p.Eviction.SizeThresholdBytes == 4096 && p.Eviction.Ttl == TimeSpan.FromHours(1));
    }
}
