namespace FaaSCache.Benchmarks;

/// <summary>One measured path: <see cref="RunOnceAsync"/> does its untimed set-up, then returns the Stopwatch ticks of one timed operation.</summary>
internal interface ITimedPath
{
    /// <summary>Gets the name its samples are kept under.</summary>
    string Name { get; }

    /// <summary>Runs the path once and returns the ticks of the timed part.</summary>
    ValueTask<long> RunOnceAsync(CancellationToken cancellationToken);
}

/// <summary>Runs several paths interleaved, the measuring loop every benchmark here shares.</summary>
internal static class Interleaved
{
    /// <summary>
    /// Runs the paths interleaved: in each round every path whose share is due runs once, so each
    /// path's iterations are spread evenly over the whole measurement and slow drifts (Azurite's own
    /// garbage collection, other load on the machine) hit all paths alike; paths with the same count
    /// always alternate. Each round runs them in an order of its own (a seeded shuffle), so no path always runs first
    /// after the others: in cachelet-read at 128 MB, `lm`, always first of the transfers after hundreds of rounds of
    /// HEADs, took 577 ms against 328 ms for the download right after it, and 1.03x of it when the two ran alone.
    /// With <paramref name="samples"/> null it is a warm-up (nothing recorded).
    /// </summary>
    /// <summary>
    /// Warm-up rounds of <see cref="RunAsync"/> (nothing recorded), repeated until they have taken at least
    /// <paramref name="atLeast"/> (once with zero): at a benchmark's first size, until tiered compilation and dynamic PGO
    /// have settled. Returns how long the warm-up took.
    /// </summary>
    public static async Task<TimeSpan> WarmUpAsync<TPath>(IReadOnlyList<TPath> paths, Func<TPath, int> count, TimeSpan atLeast, CancellationToken cancellationToken)
        where TPath : ITimedPath
    {
        var clock = Stopwatch.StartNew();
        do
        {
            await RunAsync(paths, count, samples: null, cancellationToken);
        }
        while (clock.Elapsed < atLeast);

        return clock.Elapsed;
    }

    public static async Task RunAsync<TPath>(
        IReadOnlyList<TPath> paths,
        Func<TPath, int> count,
        IReadOnlyDictionary<string, LatencySamples>? samples,
        CancellationToken cancellationToken)
        where TPath : ITimedPath
    {
        int[] counts = paths.Select(count).ToArray();
        long rounds = counts.Length == 0 ? 0 : counts.Max();
        int[] order = [.. Enumerable.Range(0, paths.Count)];
        var shuffle = new Random(20211101);
        for (long round = 0; round < rounds; round++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            shuffle.Shuffle(order);
            foreach (int p in order)
            {
                if ((round + 1) * counts[p] / rounds > round * counts[p] / rounds)
                {
                    long ticks = await paths[p].RunOnceAsync(cancellationToken);
                    samples?[paths[p].Name].Add(ticks);
                }
            }
        }
    }
}
