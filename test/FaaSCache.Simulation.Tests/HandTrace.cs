using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;

namespace FaaSCache.Simulation.Tests;

/// <summary>Small traces written by hand, and a latency model whose numbers make the expected totals easy to add up.</summary>
internal static class HandTrace
{
    public const string App = "app";

    /// <summary>Local hit 1, remote hit 5, local miss 10, remote miss 20, storage 10 microseconds, whatever the size.</summary>
    public static LatencyModel Latency { get; } = new(Flat(1), Flat(10), Flat(5), Flat(20), Flat(10));

    public static BlobAccess Read(long minute, int invocation, string key, long size = 1_000, string etag = "e0")
        => new(minute * 60_000, "r", "u", App, "i" + invocation, key, "BlockBlob", etag, size, true, false);

    public static BlobAccess Write(long minute, int invocation, string key, long size = 1_000, string etag = "e1")
        => new(minute * 60_000, "r", "u", App, "i" + invocation, key, "BlockBlob", etag, size, false, true);

    public static AppTrace Build(params BlobAccess[] rows)
    {
        var builder = new AppTraceBuilder(App);
        foreach (BlobAccess row in rows)
        {
            builder.Add(row);
        }

        return builder.Build();
    }

    private static LatencyCurve Flat(double micros) => new([(1, micros)]);
}
