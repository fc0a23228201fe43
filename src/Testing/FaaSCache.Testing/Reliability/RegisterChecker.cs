namespace FaaSCache.Testing;

/// <summary>
/// Checks a history of one-register-per-key reads and writes (every written value unique): linearizability per key by
/// the Wing &amp; Gong search with Lowe's memoisation of (linearized set, register value), and, for the weaker presets,
/// the anomalies a user notices: stale reads (a read that returns a value overwritten by a write that completed
/// before the read began, or nothing after a write completed) and lost writes (acknowledged writes that storage does
/// not hold at the end although nothing later overwrote them).
/// </summary>
public static class RegisterChecker
{
    /// <summary>Most operations per key the search accepts (the memo is a bit set of this many).</summary>
    public const int MaxOpsPerKey = 4096;

    /// <summary>Search steps after which a key is reported as undecided rather than searched on.</summary>
    public const long MaxSteps = 5_000_000;

    /// <summary>True when the operations of one key are linearizable as a register that starts empty.</summary>
    public static LinearizabilityResult CheckKey(IReadOnlyList<RegisterOp> ops)
    {
        // A read without an answer constrains nothing; a write without one may or may not have happened.
        List<RegisterOp> history = [.. ops.Where(o => o.IsWrite || o.Completed).OrderBy(o => o.Invoked)];
        if (history.Count > MaxOpsPerKey)
        {
            throw new ArgumentException($"{history.Count} operations on one key; at most {MaxOpsPerKey} are checked.", nameof(ops));
        }

        var linearized = new bool[history.Count];
        var memo = new HashSet<(string Set, string? Value)>();
        long steps = 0;
        int remainingRequired = history.Count(o => o.Completed);
        bool found = Search(history, linearized, memo, null, remainingRequired, ref steps);
        return new LinearizabilityResult(found || steps > MaxSteps, steps > MaxSteps, history.Count, steps);
    }

    /// <summary>Reads that returned a value overwritten before they began (see the class summary).</summary>
    public static IReadOnlyList<RegisterOp> StaleReads(IReadOnlyList<RegisterOp> ops)
    {
        var writes = ops.Where(o => o.IsWrite).ToDictionary(o => o.Value!, StringComparer.Ordinal);
        List<RegisterOp> completedWrites = [.. ops.Where(o => o.IsWrite && o.Completed)];
        var stale = new List<RegisterOp>();
        foreach (RegisterOp read in ops.Where(o => !o.IsWrite && o.Completed))
        {
            RegisterOp? source = read.Value is null ? null : writes.GetValueOrDefault(read.Value);
            long sourceDone = source?.EffectiveReturn ?? long.MinValue;
            // A later write, wholly after the value's write and wholly before the read, overwrote it.
            if (completedWrites.Any(w => w != source && w.Invoked > sourceDone && w.Returned < read.Invoked))
            {
                stale.Add(read);
            }
        }

        return stale;
    }

    /// <summary>
    /// Acknowledged writes that are lost given what storage holds at the end (<paramref name="finalValue"/>, null: empty):
    /// every acknowledged write that began after the stored value's write had completed.
    /// </summary>
    public static IReadOnlyList<RegisterOp> LostWrites(IReadOnlyList<RegisterOp> ops, string? finalValue)
    {
        RegisterOp? source = finalValue is null ? null : ops.FirstOrDefault(o => o.IsWrite && o.Value == finalValue);
        long sourceDone = finalValue is null ? long.MinValue : source?.EffectiveReturn ?? long.MaxValue;
        return [.. ops.Where(o => o.IsWrite && o.Completed && o != source && o.Invoked > sourceDone)];
    }

    /// <summary>Why <paramref name="read"/> is stale: the write it saw, the later one it missed, times in ms from <paramref name="origin"/>.</summary>
    public static string Explain(RegisterOp read, IReadOnlyList<RegisterOp> ops, long origin)
    {
        static string Ms(long ticks, long origin) => ticks == long.MaxValue ? "?" : (System.Diagnostics.Stopwatch.GetElapsedTime(origin, ticks).TotalMilliseconds).ToString("0", System.Globalization.CultureInfo.InvariantCulture);
        RegisterOp? source = ops.FirstOrDefault(o => o.IsWrite && o.Value == read.Value);
        long sourceDone = source?.EffectiveReturn ?? long.MinValue;
        RegisterOp? missed = ops.FirstOrDefault(w => w.IsWrite && w.Completed && w != source && w.Invoked > sourceDone && w.Returned < read.Invoked);
        return $"read through {read.Client} [{Ms(read.Invoked, origin)}, {Ms(read.Returned, origin)}] ms returned {read.Value ?? "nothing"}" +
            $" (written through {source?.Client ?? "-"} [{(source is null ? "-" : Ms(source.Invoked, origin))}, {(source is null ? "-" : Ms(source.EffectiveReturn, origin))}])" +
            $" after {missed?.Value} was written through {missed?.Client} [{(missed is null ? "-" : Ms(missed.Invoked, origin))}, {(missed is null ? "-" : Ms(missed.Returned, origin))}]";
    }

    private static bool Search(List<RegisterOp> history, bool[] linearized, HashSet<(string, string?)> memo, string? value, int remainingRequired, ref long steps)
    {
        if (remainingRequired == 0)
        {
            return true;
        }

        if (++steps > MaxSteps || !memo.Add((Key(linearized), value)))
        {
            return false;
        }

        // The candidates: pending operations invoked before every pending operation's completion (minimal in real time).
        long horizon = long.MaxValue;
        for (int i = 0; i < history.Count; i++)
        {
            if (!linearized[i])
            {
                horizon = Math.Min(horizon, history[i].EffectiveReturn);
            }
        }

        for (int i = 0; i < history.Count && history[i].Invoked <= horizon; i++)
        {
            RegisterOp op = history[i];
            if (linearized[i] || (!op.IsWrite && op.Value != value))
            {
                continue;
            }

            linearized[i] = true;
            bool done = Search(history, linearized, memo, op.IsWrite ? op.Value : value, remainingRequired - (op.Completed ? 1 : 0), ref steps);
            linearized[i] = false;
            if (done)
            {
                return true;
            }
        }

        return false;
    }

    private static string Key(bool[] linearized) => string.Create(linearized.Length, linearized, (span, set) =>
    {
        for (int i = 0; i < set.Length; i++)
        {
            span[i] = set[i] ? '1' : '0';
        }
    });
}

/// <summary>The outcome of <see cref="RegisterChecker.CheckKey"/>.</summary>
/// <param name="Linearizable">True when a linearization exists (or the search gave up: see <paramref name="Undecided"/>).</param>
/// <param name="Undecided">True when the search hit <see cref="RegisterChecker.MaxSteps"/>.</param>
/// <param name="Ops">Operations checked.</param>
/// <param name="Steps">Search steps taken.</param>
public sealed record LinearizabilityResult(bool Linearizable, bool Undecided, int Ops, long Steps);
