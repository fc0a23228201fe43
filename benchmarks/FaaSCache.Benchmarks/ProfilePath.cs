using System.Diagnostics;
using System.Globalization;
using FaaSCache.TestSupport;

namespace FaaSCache.Benchmarks;

/// <summary>
/// profile-path: one or a few cachelet-read paths at one size, run interleaved for a fixed time with nothing else in
/// the process, so a profiler attached to it (benchmarks/profile: dotnet-trace, perf) sees only that path's work.
/// Prints each path's p50 and n; the first second is an untimed warm-up.
/// </summary>
internal static class ProfilePath
{
    public const string Name = "profile-path";

    /// <summary>Runs <paramref name="pathNames"/> (cachelet-read names: lm, storage_direct, lh_strong, ...) on an object of <paramref name="size"/> bytes.</summary>
    public static async Task RunAsync(BenchmarkContext context, IReadOnlyList<string> pathNames, long size, TimeSpan duration)
    {
        CancellationToken ct = context.Cancellation;
        TextWriter output = context.Output;
        context.WriteHeader(Name);
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        await using RedisServer redis = await RedisServer.StartAsync(ct);
        using var shm = new TempShmDirectory("faascache-bench");
        await using CacheletReadRig rig = await CacheletReadRig.CreateAsync(azurite, redis, shm.Path, ct);
        IReadOnlyList<ReadPath> all = await rig.LoadAsync(size, 20211101, ct);
        var paths = pathNames
            .Select(n => all.FirstOrDefault(p => p.Name == n)
                ?? throw new ArgumentException($"--path '{n}' is not a cachelet-read path (allowed: {string.Join(", ", all.Select(p => p.Name))})."))
            .ToList();

        var warmup = Stopwatch.StartNew();
        while (warmup.Elapsed < TimeSpan.FromSeconds(1))
        {
            await Interleaved.RunAsync(paths, _ => 1, samples: null, ct);
        }

        // The marker lines let benchmarks/profile cut the warm-up out of a perf recording (perf's --delay needs a time).
        output.WriteLine($"profile-path: measuring {string.Join(", ", pathNames)} at {ReportFormat.SizeLabel(size)} for {duration.TotalSeconds:0} s");
        await output.FlushAsync(ct);
        var samples = paths.ToDictionary(p => p.Name, _ => new LatencySamples(1024));
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration)
        {
            await Interleaved.RunAsync(paths, _ => 1, samples, ct);
        }

        foreach (ReadPath p in paths)
        {
            LatencySamples s = samples[p.Name];
            output.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"{p.Name} {ReportFormat.SizeLabel(size)}: p50 {s.PercentileMicroseconds(50):0} µs, p99 {s.PercentileMicroseconds(99):0} µs, n {s.Count}"));
        }

        if (paths.Count == 2)
        {
            double ratio = samples[paths[0].Name].PercentileMicroseconds(50) / samples[paths[1].Name].PercentileMicroseconds(50);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{paths[0].Name} / {paths[1].Name} p50: {ratio:0.00}x"));
        }

        output.WriteLine(rig.Counters());
        await rig.UnloadAsync(size, ct);
    }

    /// <summary>Parses 1KB, 64KB, 1MB, 128MB (binary units) or a byte count.</summary>
    public static long ParseSize(string text)
    {
        string t = text.Trim().ToUpperInvariant();
        (string digits, long unit) = t.EndsWith("KB", StringComparison.Ordinal) ? (t[..^2], 1L << 10)
            : t.EndsWith("MB", StringComparison.Ordinal) ? (t[..^2], 1L << 20)
            : (t, 1L);
        return long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out long n) && n > 0
            ? n * unit
            : throw new ArgumentException($"--size '{text}' is not a size (allowed: a positive number with KB or MB, e.g. 128MB, or bytes).");
    }
}
