using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

/// <summary>The trace statistics the generator is checked against, counted on a hand-made trace.</summary>
[Trait("Category", "Unit")]
public sealed class TraceStatisticsTests
{
    [Fact]
    public void First_accesses_reuse_and_what_caching_the_accessed_data_saves_are_counted_per_app()
    {
        BlobAccess[] trace =
        [
            Access("a", "i1", "x", 100, read: true),
            Access("a", "i1", "x", 100, read: true),   // again in the same invocation: saved, not a reuse across invocations
            Access("a", "i2", "x", 100, read: true),   // another invocation: app a reuses
            Access("a", "i2", "y", 300, read: false),  // a first access (a write)
            Access("b", "i3", "x", 50, read: true),    // another app: its own first access
            Access("b", "i3", "x", 50, read: true),
            Access("c", "i4", "z", 10, read: true),
            Access("c", "i5", "z", 10, read: false),   // a write in another invocation: app c reuses, and it is no first access
        ];
        var statistics = new TraceStatistics();

        Assert.Equal(trace.Length, statistics.Count(trace).Count());

        // As the paper counts: every access after a blob's first is what caching the accessed data would save (1 - 20.3/44.3).
        Assert.Equal((3, 2, 8L, 4L, 4L), (statistics.Apps, statistics.AppsReusing, statistics.Accesses, statistics.FirstAccesses, statistics.SavedAccesses));
        Assert.Equal(2.0 / 3, statistics.ReuseShare, 6);
        Assert.Equal(260.0 / 720, statistics.TrafficSaved, 6);
        Assert.Equal(0.5, statistics.AccessesSaved);
    }

    private static BlobAccess Access(string app, string invocation, string blob, double bytes, bool read)
        => new(0, "r", "u", app, invocation, blob, "Block", "e", bytes, read, !read);
}
