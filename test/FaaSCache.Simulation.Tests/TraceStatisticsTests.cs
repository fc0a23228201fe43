using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

/// <summary>The trace statistics the generator is checked against, counted on a hand-made trace.</summary>
[Trait("Category", "Unit")]
public sealed class TraceStatisticsTests
{
    [Fact]
    public void First_accesses_reuse_and_what_an_ideal_cache_saves_are_counted_per_app()
    {
        BlobAccess[] trace =
        [
            Access("a", "i1", "x", 100, read: true),
            Access("a", "i1", "x", 100, read: true),   // again in the same invocation: saved, not a reuse across invocations
            Access("a", "i2", "x", 100, read: true),   // another invocation: app a reuses
            Access("a", "i2", "y", 300, read: false),  // a first access (a write)
            Access("b", "i3", "x", 50, read: true),    // another app: its own first access
            Access("b", "i3", "x", 50, read: true),
        ];
        var statistics = new TraceStatistics();

        Assert.Equal(trace.Length, statistics.Count(trace).Count());

        Assert.Equal((2, 1, 6L, 3L, 3L), (statistics.Apps, statistics.AppsReusing, statistics.Accesses, statistics.FirstAccesses, statistics.SavedReads));
        Assert.Equal(0.5, statistics.ReuseShare);
        Assert.Equal(250.0 / 700, statistics.TrafficSaved, 6);
        Assert.Equal(0.5, statistics.AccessesSaved);
    }

    private static BlobAccess Access(string app, string invocation, string blob, double bytes, bool read)
        => new(0, "r", "u", app, invocation, blob, "Block", "e", bytes, read, !read);
}
