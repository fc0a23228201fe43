namespace FaaSCache.Simulation.WhatIf;

/// <summary>Reads one app's log, ranks the policy grid, and prints the table and the winning host.json.</summary>
public static class WhatIfReport
{
    /// <summary>Loads <paramref name="logPath"/> (CSV or Parquet with the trace's columns) as one app.</summary>
    /// <param name="logPath">The access log.</param>
    /// <param name="appName">The app to take when the log holds several; null: the log must hold exactly one.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>The app's trace.</returns>
    /// <exception cref="InvalidDataException">The log is empty, holds several apps and none was named, or lacks the named one.</exception>
    public static async Task<AppTrace> LoadAppAsync(string logPath, string? appName, CancellationToken cancellationToken = default)
    {
        var builders = new Dictionary<string, AppTraceBuilder>(StringComparer.Ordinal);
        await foreach (BlobAccess row in TraceFile.ReadAsync(logPath, cancellationToken).ConfigureAwait(false))
        {
            if (appName is not null && !string.Equals(row.AppName, appName, StringComparison.Ordinal))
            {
                continue;
            }

            if (!builders.TryGetValue(row.AppName, out AppTraceBuilder? builder))
            {
                builder = new AppTraceBuilder(row.AppName);
                builders[row.AppName] = builder;
            }

            builder.Add(row);
        }

        return builders.Count switch
        {
            0 => throw new InvalidDataException(appName is null ? $"'{logPath}' has no accesses." : $"'{logPath}' has no accesses of app '{appName}'."),
            1 => builders.Values.Single().Build(),
            _ => throw new InvalidDataException(
                $"'{logPath}' holds {builders.Count} apps ({string.Join(", ", builders.Keys.Take(5))}{(builders.Count > 5 ? ", ..." : string.Empty)}): name one with --app."),
        };
    }

    /// <summary>Prints the ranking: each policy set's hit rate, mean latency and improvement, then the winner's host.json.</summary>
    /// <param name="output">Where to print.</param>
    /// <param name="trace">The app.</param>
    /// <param name="layout">Its instances.</param>
    /// <param name="outcomes">The ranking, best first.</param>
    /// <param name="top">How many rows of the table to print.</param>
    public static void Write(TextWriter output, AppTrace trace, AppLayout layout, IReadOnlyList<WhatIfOutcome> outcomes, int top)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentNullException.ThrowIfNull(layout);
        ArgumentNullException.ThrowIfNull(outcomes);
        IFormatProvider c = CultureInfo.InvariantCulture;
        output.WriteLine(string.Create(c, $"app {trace.AppName}: {trace.Count:N0} accesses, {trace.Invocations:N0} invocations, {trace.Keys.Count:N0} blobs, {(layout.FixedInstances is { } n ? $"{n} instance(s)" : $"1 .. {layout.MaxInstances} instances as the voters scale it")}"));
        output.WriteLine(string.Create(c, $"{outcomes.Count} policy sets replayed; best first (mean latency per access; how much faster than without the cache):"));
        output.WriteLine(string.Create(c, $"{"#",3}  {"policy set",-40} {"hit rate",9} {"mean ms",9} {"faster",8}"));
        foreach ((WhatIfOutcome o, int i) in outcomes.Take(top).Select((o, i) => (o, i)))
        {
            output.WriteLine(string.Create(c, $"{i + 1,3}  {o.Policy.Label,-40} {o.Result.HitRate * 100,8:F1}% {o.Result.MeanMicros / 1000,9:F3} {o.Result.ImprovementPct,7:F1}%"));
        }

        WhatIfOutcome winner = outcomes[0];
        output.WriteLine();
        output.WriteLine(string.Create(
            c,
            $"winner: {winner.Policy.Label}: expected hit rate {winner.Result.HitRate * 100:F1}%, mean latency {winner.Result.MeanMicros / 1000:F3} ms, {Faster(winner.Result.ImprovementPct)}"));
        output.WriteLine(winner.Policy.ToHostJson());
        if (winner.Result.ImprovementPct <= 0)
        {
            output.WriteLine("note: no policy set beats reading storage directly for this app (its blobs are not reused enough for the cache's miss and version-check costs); doNotCache globs for its blobs would avoid those costs.");
        }
    }

    /// <summary>"12.3% faster than without the cache", or "4.5% slower ..." when the cache costs more than it saves.</summary>
    private static string Faster(double improvementPct) => improvementPct >= 0
        ? string.Create(CultureInfo.InvariantCulture, $"{improvementPct:F1}% faster than without the cache")
        : string.Create(CultureInfo.InvariantCulture, $"{-improvementPct:F1}% slower than without the cache");
}
