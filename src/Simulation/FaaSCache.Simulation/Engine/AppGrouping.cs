namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Splits a trace stream into per-app traces. Each app's rows must be contiguous (the generator writes them so; the
/// public trace file must be sorted by <c>AnonAppName</c> first, e.g. with <c>sort -t, -k4,4</c>); within an app any
/// order is fine. Only one app is held in memory at a time.
/// </summary>
public static class AppGrouping
{
    /// <summary>Groups a synchronous stream.</summary>
    /// <param name="rows">The trace rows.</param>
    /// <returns>One trace per app, in stream order.</returns>
    /// <exception cref="InvalidDataException">An app's rows are not contiguous.</exception>
    public static IEnumerable<AppTrace> Group(IEnumerable<BlobAccess> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var seen = new HashSet<string>(StringComparer.Ordinal);
        AppTraceBuilder? current = null;
        foreach (BlobAccess row in rows)
        {
            if (Next(ref current, row, seen) is { } done)
            {
                yield return done;
            }
        }

        if (current is { Count: > 0 })
        {
            yield return current.Build();
        }
    }

    /// <summary>Groups an asynchronous stream (a trace file).</summary>
    /// <param name="rows">The trace rows.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>One trace per app, in stream order.</returns>
    /// <exception cref="InvalidDataException">An app's rows are not contiguous.</exception>
    public static async IAsyncEnumerable<AppTrace> GroupAsync(IAsyncEnumerable<BlobAccess> rows, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var seen = new HashSet<string>(StringComparer.Ordinal);
        AppTraceBuilder? current = null;
        await foreach (BlobAccess row in rows.WithCancellation(cancellationToken).ConfigureAwait(false))
        {
            if (Next(ref current, row, seen) is { } done)
            {
                yield return done;
            }
        }

        if (current is { Count: > 0 })
        {
            yield return current.Build();
        }
    }

    private static AppTrace? Next(ref AppTraceBuilder? current, in BlobAccess row, HashSet<string> seen)
    {
        if (current is not null && string.Equals(current.AppName, row.AppName, StringComparison.Ordinal))
        {
            current.Add(row);
            return null;
        }

        if (!seen.Add(row.AppName))
        {
            throw new InvalidDataException(
                $"The rows of app '{row.AppName}' are not contiguous: sort the trace by {TraceColumns.AppName} first (the simulator keeps one app in memory at a time).");
        }

        AppTrace? done = current is { Count: > 0 } ? current.Build() : null;
        current = new AppTraceBuilder(row.AppName);
        current.Add(row);
        return done;
    }
}
