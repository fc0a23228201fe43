using System.Globalization;
using FaaSCache.Options;

namespace FaaSCache.Simulation.Trace;

/// <summary>
/// A seeded, streaming generator of an Azure-shaped blob trace (<see cref="AzureTraceShape"/>): rows come app by app,
/// in time order within an app, and only the current app's per-blob versions are held in memory.
/// </summary>
/// <remarks>
/// Per app: its accesses follow a log-normal share of the total (capped at
/// <see cref="TraceGeneratorOptions.MaxAccessesPerApp"/>); accesses per invocation 1..4; invocations per blob from
/// <see cref="AzureTraceShape.InvocationsPerBlob"/> (busier apps placed higher, <see cref="AzureTraceShape.ReuseBySize"/>)
/// give the blob count. Apps with at most one invocation per blob give each invocation blobs of its own; the others pick
/// blobs by a Zipf(0.9) popularity (the exponent is ours: with the other choices it keeps the four published statistics
/// of <see cref="TraceStatistics"/> within 10% for the benchmark's seed), their popular blobs the small ones. Invocations
/// arrive as a Poisson process over the trace's days. Each access writes with probability 22.7%; a write changes the
/// blob's ETag. A blob's size is fixed by a hash of (seed, app, blob), from <see cref="AzureTraceShape.BlobBytes"/>, so
/// the same blob always has the same size.
/// </remarks>
public sealed class TraceGenerator
{
    private const double ZipfExponent = 0.9;
    private readonly TraceGeneratorOptions _options;

    /// <summary>Creates a generator.</summary>
    /// <param name="options">What to generate.</param>
    public TraceGenerator(TraceGeneratorOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _ = new TraceGeneratorOptionsValidator().ThrowIfInvalid(options);
        _options = options;
    }

    /// <summary>The accesses of each app, in app order; every app's rows are contiguous and in time order.</summary>
    /// <returns>The trace rows, generated lazily.</returns>
    public IEnumerable<BlobAccess> Generate()
    {
        long[] perApp = AccessesPerApp();
        double[] places = PlacesOnFig2(perApp);
        for (int app = 0; app < perApp.Length; app++)
        {
            foreach (BlobAccess access in GenerateApp(app, perApp[app], places[app]))
            {
                yield return access;
            }
        }
    }

    /// <summary>
    /// Each app's place (0..1) on <see cref="AzureTraceShape.InvocationsPerBlob"/>: the apps ranked by
    /// rho q + (1 - rho) v, q the app's place among the apps by size, v a golden-ratio sequence over that order from a
    /// seeded start (rho <see cref="AzureTraceShape.ReuseBySize"/>). The places are evenly spread over the apps, so Fig.
    /// 2's shares hold exactly; busier apps sit higher; and apps of similar size get places spread over the whole curve,
    /// so the few largest apps, which carry most accesses, are a mix and not all one kind by chance.
    /// </summary>
    private double[] PlacesOnFig2(long[] perApp)
    {
        const double Golden = 0.6180339887498949;
        double start = new Random((int)Mix(((ulong)(uint)_options.Seed << 32) ^ 0xF1_6200_0000UL)).NextDouble();
        double rho = AzureTraceShape.ReuseBySize;
        int[] bySize = [.. Enumerable.Range(0, perApp.Length).OrderBy(a => perApp[a]).ThenBy(a => a)];
        double[] score = new double[perApp.Length];
        for (int k = 0; k < bySize.Length; k++)
        {
            double v = (start + (k * Golden)) % 1;
            score[bySize[k]] = (rho * (k + 0.5) / bySize.Length) + ((1 - rho) * v);
        }

        int[] order = [.. Enumerable.Range(0, score.Length).OrderBy(a => score[a]).ThenBy(a => a)];
        double[] places = new double[score.Length];
        for (int rank = 0; rank < order.Length; rank++)
        {
            places[order[rank]] = (rank + 0.5) / order.Length;
        }

        return places;
    }

    /// <summary>Each app's number of accesses: log-normal shares of the total, capped, summing to about the total.</summary>
    internal long[] AccessesPerApp()
    {
        var random = new Random(_options.Seed);
        double[] weights = new double[_options.Apps];
        for (int i = 0; i < weights.Length; i++)
        {
            weights[i] = Math.Exp(AzureTraceShape.AppSizeSigma * Normal(random));
        }

        // Apps over the cap keep the cap; the rest share what remains in proportion to their weights.
        long[] counts = new long[weights.Length];
        bool[] capped = new bool[weights.Length];
        for (int round = 0; round < 8; round++)
        {
            double free = weights.Where((_, i) => !capped[i]).Sum();
            long left = _options.Accesses - (capped.Count(c => c) * (long)_options.MaxAccessesPerApp);
            bool changed = false;
            for (int i = 0; i < weights.Length; i++)
            {
                if (capped[i])
                {
                    counts[i] = _options.MaxAccessesPerApp;
                    continue;
                }

                counts[i] = Math.Max(1, (long)Math.Round(left * weights[i] / free));
                if (counts[i] > _options.MaxAccessesPerApp)
                {
                    capped[i] = changed = true;
                    counts[i] = _options.MaxAccessesPerApp;
                }
            }

            if (!changed)
            {
                break;
            }
        }

        return counts;
    }

    private IEnumerable<BlobAccess> GenerateApp(int app, long accesses, double place)
    {
        // Not HashCode.Combine: it is seeded per process, and the trace must be the same in every run.
        var random = new Random((int)Mix(((ulong)(uint)_options.Seed << 32) ^ (uint)app ^ 0x5eed_0000_0000UL));
        int perInvocation = 1 + Pick(random, AzureTraceShape.AccessesPerInvocationWeights);
        long invocations = Math.Max(1, (accesses + perInvocation - 1) / perInvocation);
        double invocationsPerBlob = AzureTraceShape.InvocationsPerBlob.Quantile(place);
        long blobs = Math.Clamp((long)Math.Round(invocations / invocationsPerBlob), 1, accesses);
        bool walk = invocationsPerBlob <= 1;
        var zipf = new ZipfSampler(blobs, ZipfExponent);
        int[] versions = new int[blobs];

        string appName = Hex(app, 0xA);
        string region = "r" + (app % AzureTraceShape.Regions).ToString(CultureInfo.InvariantCulture);
        string user = Hex((int)((long)app * AzureTraceShape.Users / Math.Max(1, _options.Apps)), 0xB);
        double spanMs = _options.Days * 86_400_000.0;
        double meanGapMs = spanMs / invocations;
        double t = AzureTraceShape.StartUnixMs + (random.NextDouble() * meanGapMs);
        long emitted = 0;
        for (long inv = 0; emitted < accesses; inv++)
        {
            string invocationId = appName + "-" + inv.ToString("x", CultureInfo.InvariantCulture);
            for (int k = 0; k < perInvocation && emitted < accesses; k++, emitted++)
            {
                // A walk gives each invocation blobs of its own (its k-th access the k-th of them, round again when it has
                // fewer than accesses): no blob is used by two invocations.
                long blob = walk ? WalkBlob(inv, k, invocations, blobs) : zipf.Next(random);
                bool write = random.NextDouble() >= AzureTraceShape.ReadShare;
                if (write)
                {
                    versions[blob]++;
                }

                // Accesses of one invocation follow each other by a few milliseconds.
                long timestamp = (long)t + k;
                yield return new BlobAccess(
                    timestamp,
                    region,
                    user,
                    appName,
                    invocationId,
                    "b" + blob.ToString("x", CultureInfo.InvariantCulture),
                    "BlockBlob",
                    "0x" + versions[blob].ToString("x", CultureInfo.InvariantCulture),
                    walk ? BlobSize(app, blob) : BlobSize(app, blob, blobs),
                    !write,
                    write);
            }

            t += -Math.Log(1 - random.NextDouble()) * meanGapMs;
        }
    }

    /// <summary>A blob's size in whole bytes, fixed by (seed, app, blob).</summary>
    internal double BlobSize(int app, long blob) => Math.Round(AzureTraceShape.BlobBytes.Quantile(Uniform(app, blob, 0)));

    /// <summary>
    /// The size of blob <paramref name="rank"/> (0 the most popular) of an app that picks among <paramref name="blobs"/>
    /// by popularity: the more popular, the smaller (§6.2: "smaller objects tend to be reused more often"). Its quantile
    /// is a hashed point in the middle half of its rank's own slice of [0, 1]: over an app's many blobs the quantiles stay
    /// uniform and the sizes keep the published percentiles, and an app with one blob never reuses a gigabyte millions of
    /// times (its one blob is between p25 and p75).
    /// </summary>
    internal double BlobSize(int app, long rank, long blobs) => Math.Round(AzureTraceShape.BlobBytes.Quantile((rank + 0.25 + (0.5 * Uniform(app, rank, 1))) / blobs));

    private static long WalkBlob(long invocation, int access, long invocations, long blobs)
    {
        long first = invocation * blobs / invocations;
        long width = Math.Max(1, ((invocation + 1) * blobs / invocations) - first);
        return first + (access % width);
    }

    private double Uniform(int app, long blob, ulong stream)
    {
        ulong h = Mix(((ulong)(uint)_options.Seed * 0x9E3779B97F4A7C15UL) ^ ((ulong)(uint)app << 40) ^ (ulong)blob ^ (stream * 0xD1B54A32D192ED03UL));
        return (h >> 11) * (1.0 / (1UL << 53));
    }

    private static ulong Mix(ulong z)
    {
        // SplitMix64's finaliser: a cheap, well-spread hash of the blob's identity.
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }

    private static string Hex(int value, int salt) => ((uint)Mix(((ulong)(uint)salt << 32) | (uint)value)).ToString("x8", CultureInfo.InvariantCulture)
        + value.ToString("x4", CultureInfo.InvariantCulture);

    private static int Pick(Random random, IReadOnlyList<double> weights)
    {
        double u = random.NextDouble() * weights.Sum();
        for (int i = 0; i < weights.Count; i++)
        {
            u -= weights[i];
            if (u < 0)
            {
                return i;
            }
        }

        return weights.Count - 1;
    }

    private static double Normal(Random random)
    {
        double u1 = 1 - random.NextDouble();
        double u2 = random.NextDouble();
        return Math.Sqrt(-2 * Math.Log(u1)) * Math.Cos(2 * Math.PI * u2);
    }
}
