namespace FaaSCache.Simulation.Trace;

/// <summary>
/// Fixes every app's counts before a row is written (<see cref="AppPlan"/>), so that the app-weighted statistics of the
/// notebook hold over the apps however the rows come out: invocations, blobs (ETags) and invocations per blob from the
/// three curves of Fig. 2 / cell 10 at once; accesses to the published 44.3 M over 33.1 M invocations; writes to the
/// published 22.7%; each app's active span to the median app's mean time between invocations (20 min, §6.3).
/// </summary>
internal static class AppPlanner
{
    /// <summary>Rounds of the pairing (ours: it settles within ~20).</summary>
    private const int PairingRounds = 30;

    /// <summary>
    /// Share of apps that never write, beyond those the statistics force to (an app that reads one blob in several
    /// invocations cannot write it). Ours: "read-only apps" is not a published share.
    /// </summary>
    private const double ReadOnlyApps = 0.2;

    public static AppPlan[] Plan(TraceGeneratorOptions options)
    {
        int n = options.Apps;
        long cap = options.MaxAccessesPerApp;
        // The apps' places on the curves, from the first app (0) to the last (1), so that the published maximum is one app's.
        double[] p = [.. Enumerable.Range(0, n).Select(k => n > 1 ? k / (n - 1.0) : 0.5)];
        long[] blobs = [.. p.Select(q => Math.Clamp((long)Math.Round(AzureTraceShape.BlobsPerApp.Quantile(q)), 1, cap))];
        double[] ratios = [.. p.Select(AzureTraceShape.InvocationsPerBlob)];

        // The curve's top is scaled so that the invocations reach §2.1's 33.1 M (pro rata for another number of apps).
        double wanted = (double)AzureTraceShape.Invocations * n / AzureTraceShape.Apps;
        (long[] inv, long[] blob) = Pair(options.Seed, p, blobs, ratios, cap, 1);
        double lo = 0.2, hi = 20;
        for (int step = 0; step < 24; step++)
        {
            double top = Math.Sqrt(lo * hi);
            (inv, blob) = Pair(options.Seed, p, blobs, ratios, cap, top);
            (lo, hi) = inv.Sum() < wanted ? (top, hi) : (lo, top);
        }

        var random = new Random(Seeds.Of(options.Seed, 0xACCE55));
        long[] accesses = Accesses(random, inv, blob, cap);
        Scale(options.Accesses, cap, inv, blob, accesses);
        long[] writes = Writes(random, inv, blob, accesses);
        (double[] start, double[] span) = Times(random, inv, options.Days);
        return [.. Enumerable.Range(0, n).Select(a => new AppPlan(a, inv[a], blob[a], accesses[a], writes[a], start[a], span[a]))];
    }

    /// <summary>
    /// Pairs the apps' blob counts (Fig. 2's "Blobs", exact), invocations per blob (Fig. 2's own curve, exact but for
    /// rounding) and invocations ("Invocations", as close as the other two allow): starting from a loose inverse
    /// coupling (ours), each round ranks the apps by their invocations, gives each the invocation count of its rank,
    /// then re-deals the blob counts and the ratios by rank of what that count asks of each.
    /// </summary>
    private static (long[] Invocations, long[] Blobs) Pair(int seed, double[] p, long[] blobs, double[] ratios, long cap, double top)
    {
        int n = p.Length;
        var random = new Random(Seeds.Of(seed, 0xF162));
        double[] targets = [.. p.Select(q => (double)Math.Clamp((long)Math.Round(AzureTraceShape.InvocationsPerApp.Quantile(q) * (q > AzureTraceShape.InvocationsTopFrom ? top : 1)), 1, cap))];
        long[] blobOf = (long[])blobs.Clone();
        double[] ratioOf = new double[n];
        int[] start = Order(random, [.. Enumerable.Range(0, n).Select(k => (-0.4 * (k + 0.5) / n) + (0.6 * random.NextDouble()))]);
        for (int j = 0; j < n; j++)
        {
            ratioOf[start[j]] = ratios[j];
        }

        double[] targetOf = new double[n];
        for (int round = 0; round < PairingRounds; round++)
        {
            long[] invocations = [.. Enumerable.Range(0, n).Select(a => Invocations(blobOf[a], ratioOf[a], cap))];
            Deal(Order(random, [.. invocations.Select(v => (double)v)]), targets, targetOf);
            int[] byWant = Order(random, [.. Enumerable.Range(0, n).Select(a => Math.Log(targetOf[a]) - Math.Log(ratioOf[a]))]);
            for (int j = 0; j < n; j++)
            {
                blobOf[byWant[j]] = blobs[j];
            }

            Deal(Order(random, [.. Enumerable.Range(0, n).Select(a => Math.Log(targetOf[a]) - Math.Log(blobOf[a]))]), ratios, ratioOf);
        }

        return ([.. Enumerable.Range(0, n).Select(a => Invocations(blobOf[a], ratioOf[a], cap))], blobOf);
    }

    /// <summary>An app's invocations from its blobs and ratio, on the ratio's side of 1 (below, exactly, above).</summary>
    private static long Invocations(long blobs, double ratio, long cap) => ratio switch
    {
        < 1 => blobs > 1 ? Math.Clamp((long)Math.Round(blobs * ratio), 1, blobs - 1) : 1,
        1 => blobs,
        _ => Math.Min(cap, Math.Max(blobs + 1, (long)Math.Round(blobs * ratio))),
    };

    private static void Deal(int[] order, double[] values, double[] into)
    {
        for (int j = 0; j < order.Length; j++)
        {
            into[order[j]] = values[j];
        }
    }

    /// <summary>The apps in ascending order of <paramref name="keys"/>, ties broken at random.</summary>
    private static int[] Order(Random random, double[] keys)
    {
        double[] tie = [.. keys.Select(_ => random.NextDouble())];
        int[] order = [.. Enumerable.Range(0, keys.Length)];
        Array.Sort(order, (a, b) => keys[a] != keys[b] ? keys[a].CompareTo(keys[b]) : tie[a].CompareTo(tie[b]));
        return order;
    }

    /// <summary>
    /// Accesses: at least one per invocation and one per blob; the rest spread over the apps in proportion to their
    /// invocations times an exponential draw (ours), so that the accesses per invocation reach the published 44.3 M /
    /// 33.1 M.
    /// </summary>
    private static long[] Accesses(Random random, long[] inv, long[] blob, long cap)
    {
        double[] spread = [.. inv.Select(_ => -Math.Log(1 - random.NextDouble()))];
        double wanted = inv.Sum() * ((double)AzureTraceShape.Accesses / AzureTraceShape.Invocations);
        long[] At(double c) => [.. inv.Select((v, a) => Math.Min(cap, Math.Max(blob[a], (long)Math.Round(v * (1 + (c * spread[a]))))))];
        double lo = 0, hi = 100;
        for (int step = 0; step < 50; step++)
        {
            double mid = (lo + hi) / 2;
            (lo, hi) = At(mid).Sum() < wanted ? (mid, hi) : (lo, mid);
        }

        return At(hi);
    }

    /// <summary>
    /// Fits the plan to the accesses asked for: fewer cut the busiest apps down to a common ceiling (every app under it
    /// keeps its counts, so the shares of small apps hold), more scale every app up; either keeps each app's side of one
    /// invocation per blob. A re-using app cut by s keeps s^0.5 of its blobs (ours: cut short, an app that re-uses
    /// popular blobs loses fewer distinct blobs than accesses; linear would make many of them single-blob apps).
    /// </summary>
    private static void Scale(long asked, long cap, long[] inv, long[] blob, long[] accesses)
    {
        long total = accesses.Sum();
        double[] factor;
        if (asked >= total)
        {
            // Up: one factor for all, the apps it would take past the cap held at it.
            double lo = 1, hi = asked;
            for (int step = 0; step < 60; step++)
            {
                double mid = (lo + hi) / 2;
                (lo, hi) = accesses.Sum(a => Math.Min(cap, a * mid)) < asked ? (mid, hi) : (lo, mid);
            }

            factor = [.. accesses.Select(a => Math.Min(cap, a * hi) / a)];
        }
        else
        {
            double lo = 1, hi = accesses.Max();
            for (int step = 0; step < 60; step++)
            {
                double mid = (lo + hi) / 2;
                (lo, hi) = accesses.Sum(a => Math.Min(a, mid)) < asked ? (mid, hi) : (lo, mid);
            }

            factor = [.. accesses.Select(a => Math.Min(1, lo / a))];
        }

        for (int a = 0; a < inv.Length; a++)
        {
            double s = factor[a];
            long i = inv[a], b = blob[a];
            long acc = Math.Clamp((long)Math.Round(accesses[a] * s), 1, cap);
            long i2 = Math.Clamp((long)Math.Round(i * s), 1, acc);
            long b2 = i == b ? i2
                : i > b ? (i2 > 1 ? Math.Clamp((long)Math.Round(b * Math.Sqrt(s)), 1, i2 - 1) : 1)
                : Math.Clamp((long)Math.Round(b * s), Math.Min(i2 + 1, acc), acc);
            (inv[a], blob[a], accesses[a]) = (i2, b2, Math.Max(acc, Math.Max(i2, b2)));
        }
    }

    /// <summary>
    /// Writes: each creates a blob version, so an app at or below one invocation per blob may write each of its blobs
    /// once and one above may write one fewer than its blobs (its first version of each is read). Apps want a uniform
    /// share (ours) or none (<see cref="ReadOnlyApps"/>); one factor brings the total to the published 22.7%.
    /// </summary>
    private static long[] Writes(Random random, long[] inv, long[] blob, long[] accesses)
    {
        double[] want = [.. inv.Select(_ => random.NextDouble() < ReadOnlyApps ? 0 : random.NextDouble())];
        long[] most = [.. inv.Select((v, a) => Math.Min(accesses[a], v <= blob[a] ? blob[a] : blob[a] - 1))];
        double wanted = (1 - AzureTraceShape.ReadShare) * accesses.Sum();
        long[] At(double c) => [.. want.Select((w, a) => Math.Min(most[a], (long)Math.Round(c * w * accesses[a])))];
        double lo = 0, hi = 1e6;
        for (int step = 0; step < 80; step++)
        {
            double mid = (lo + hi) / 2;
            (lo, hi) = At(mid).Sum() < wanted ? (mid, hi) : (lo, mid);
        }

        return At(hi);
    }

    /// <summary>
    /// Each app's active span and start: its mean time between invocations is log-normal (ours) with the median and
    /// spread fitted so that the median app's is §6.3's 20 minutes and <see cref="AzureTraceShape.AppsRarerThanOncePerMinute"/>
    /// of apps are invoked less than once a minute, at most the trace's length; the span starts at a uniform point.
    /// </summary>
    private static (double[] Start, double[] Span) Times(Random random, long[] inv, int days)
    {
        double length = days * 86_400_000.0;
        if (!inv.Any(v => v > 1))
        {
            return (new double[inv.Length], new double[inv.Length]);
        }

        double[] z = [.. inv.Select(_ => Math.Sqrt(-2 * Math.Log(1 - random.NextDouble())) * Math.Cos(2 * Math.PI * random.NextDouble()))];
        double[] most = [.. inv.Select(v => v > 1 ? (length - 60_000) / (v - 1) : 0)];
        double[] Iat(double median, double sigma) => [.. z.Select((x, a) => inv[a] > 1 ? Math.Min(most[a], median * Math.Exp(sigma * x)) : double.PositiveInfinity)];
        double MedianFor(double sigma)
        {
            double lo = 1, hi = length;
            for (int step = 0; step < 60; step++)
            {
                double mid = Math.Sqrt(lo * hi);
                double[] iat = [.. Iat(mid, sigma).Where((_, a) => inv[a] > 1).Order()];
                (lo, hi) = iat[iat.Length / 2] < AzureTraceShape.MedianAppMeanIatMinutes * 60_000 ? (mid, hi) : (lo, mid);
            }

            return hi;
        }

        double sLo = 0.1, sHi = 8;
        for (int step = 0; step < 40; step++)
        {
            double sigma = (sLo + sHi) / 2;
            double rare = Iat(MedianFor(sigma), sigma).Count(x => x > 60_000) / (double)inv.Length;
            (sLo, sHi) = rare > AzureTraceShape.AppsRarerThanOncePerMinute ? (sigma, sHi) : (sLo, sigma);
        }

        double[] final = Iat(MedianFor(sLo), sLo);
        double[] span = [.. final.Select((x, a) => inv[a] > 1 ? x * (inv[a] - 1) : 0)];
        double[] start = [.. span.Select(s => random.NextDouble() * Math.Max(0, length - 60_000 - s))];
        return (start, span);
    }
}
