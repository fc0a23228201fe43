namespace FaaSCache.Simulation.Trace;

/// <summary>
/// A seeded, streaming generator of a blob trace fitted to the Azure Functions blob trace 2020 app by app
/// (<see cref="AzureTraceShape"/>): rows come app by app, in time order within an app, and only the current app's blobs
/// are held in memory.
/// </summary>
/// <remarks>
/// Every app's counts are fixed first (<see cref="AppPlanner"/>): invocations, distinct blob versions (ETags), accesses
/// and writes, and its active span. An app at or below one invocation per blob gives each invocation blobs of its own
/// (their first access a write or a read, the rest re-reads within the invocation), so its blobs are exactly its plan's.
/// An app above one re-uses: it introduces its blobs over time, re-reads and rewrites them by a Zipf(0.9) popularity
/// (ours), its popular blobs the small ones (§6.2: "smaller objects tend to be reused more often"); every write makes a
/// new version. A version's ETag is a hash of (seed, app, blob, version), unique per version across the trace. Sizes:
/// a blob first read is drawn from <see cref="AzureTraceShape.ReadBlobBytes"/>, a version written from
/// <see cref="AzureTraceShape.WriteBlobBytes"/>. Invocations arrive in bursts: the gaps are log-normal (sigma
/// <see cref="GapSigma"/>, ours; a coefficient of variation of ~1.1 where Poisson's is 1), scaled to the app's span.
/// </remarks>
public sealed class TraceGenerator
{
    /// <summary>
    /// Spread of the log-normal gaps between an app's invocations (ours: Fig. 3 says most blobs are accessed burstier
    /// than Poisson, not how an app's invocations are: on the full trace 1.5 made 55% of the blobs with three accesses
    /// or more bursty (an IaT CoV over 1), 1.0 made 40%, where Fig. 3's CDF reads ~36%).
    /// </summary>
    public const double GapSigma = 0.9;

    /// <summary>
    /// Share of a re-using app's blobs whose size follows their popularity (§6.2: "smaller objects tend to be reused more
    /// often"; ours, set so that caching what was accessed saves §2.1's 27% of the traffic).
    /// </summary>
    public const double SizeByPopularity = 0.7;

    private const double ZipfExponent = 0.9;
    private readonly TraceGeneratorOptions _options;
    private AppPlan[]? _plans;

    /// <summary>Creates a generator.</summary>
    /// <param name="options">What to generate.</param>
    public TraceGenerator(TraceGeneratorOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _ = new TraceGeneratorOptionsValidator().ThrowIfInvalid(options);
        _options = options;
    }

    /// <summary>Gets every app's counts, in app order (computed once, before any row).</summary>
    public IReadOnlyList<AppPlan> Plans => _plans ??= AppPlanner.Plan(_options);

    /// <summary>The accesses of each app, in app order; every app's rows are contiguous and in time order.</summary>
    /// <returns>The trace rows, generated lazily.</returns>
    public IEnumerable<BlobAccess> Generate()
    {
        foreach (AppPlan plan in Plans)
        {
            IEnumerable<BlobAccess> rows = plan.Invocations > plan.Blobs ? Reusing(plan) : Private(plan);
            foreach (BlobAccess access in rows)
            {
                yield return access;
            }
        }
    }

    /// <summary>An app at or below one invocation per blob: each invocation's blobs are its own.</summary>
    private IEnumerable<BlobAccess> Private(AppPlan plan)
    {
        var random = new Random(Seeds.Of(_options.Seed, 0x5EED_0000UL + (ulong)plan.App));
        var app = new AppRows(this, plan);
        long etagsLeft = plan.Blobs, writesLeft = plan.Writes, next = 0;
        List<(string Name, string ETag, double Bytes)> own = [];
        for (long inv = 0; inv < plan.Invocations; inv++)
        {
            long blobs = Share(inv, plan.Blobs, plan.Invocations);
            long accesses = blobs + Share(inv, plan.Accesses - plan.Blobs, plan.Invocations);
            string invocation = app.Invocation(inv);
            own.Clear();
            for (int k = 0; k < accesses; k++)
            {
                if (k < blobs)
                {
                    bool write = random.NextDouble() * etagsLeft < writesLeft;
                    etagsLeft--;
                    writesLeft -= write ? 1 : 0;
                    long name = next++;
                    double bytes = Math.Round(write
                        ? AzureTraceShape.WriteBlobBytes.Quantile(Seeds.Uniform(_options.Seed, plan.App, name, 2))
                        : AzureTraceShape.ReadBlobBytes.Quantile(Seeds.Uniform(_options.Seed, plan.App, name, 1)));
                    own.Add((Name(name), ETag(plan.App, name, write ? 1 : 0), bytes));
                    yield return app.Row(k, invocation, own[^1].Name, own[^1].ETag, own[^1].Bytes, write);
                }
                else
                {
                    var (name, etag, bytes) = own[random.Next(own.Count)];
                    yield return app.Row(k, invocation, name, etag, bytes, write: false);
                }
            }
        }
    }

    /// <summary>An app above one invocation per blob: introduces, re-reads and rewrites blobs across invocations.</summary>
    private IEnumerable<BlobAccess> Reusing(AppPlan plan)
    {
        var random = new Random(Seeds.Of(_options.Seed, 0x5EED_0000UL + (ulong)plan.App));
        var app = new AppRows(this, plan);
        long names = plan.Blobs - plan.Writes;
        string[] nameOf = new string[names], etagOf = new string[names];
        int[] version = new int[names];
        double[] bytesOf = new double[names];
        long introduced = 0, introLeft = names, writesLeft = plan.Writes, readsLeft = plan.Accesses - names - plan.Writes;
        for (long inv = 0; inv < plan.Invocations; inv++)
        {
            long accesses = Share(inv, plan.Accesses, plan.Invocations);
            string invocation = app.Invocation(inv);
            for (int k = 0; k < accesses; k++)
            {
                double u = random.NextDouble() * (introLeft + writesLeft + readsLeft);
                long blob;
                bool write = false;
                if (introduced == 0 || u < introLeft)
                {
                    blob = introduced++;
                    introLeft--;
                    nameOf[blob] = Name(blob);
                    etagOf[blob] = ETag(plan.App, blob, 0);
                    // A share of the blobs take their size by popularity rank (the popular, early ones the small ones);
                    // the rest at random. Either way over the app's blobs the quantiles stay uniform.
                    double rank = Seeds.Uniform(_options.Seed, plan.App, blob, 3) < SizeByPopularity
                        ? (blob + 0.25 + (0.5 * Seeds.Uniform(_options.Seed, plan.App, blob, 1))) / names
                        : Seeds.Uniform(_options.Seed, plan.App, blob, 1);
                    bytesOf[blob] = Math.Round(AzureTraceShape.ReadBlobBytes.Quantile(rank));
                }
                else
                {
                    blob = Zipf(random, introduced);
                    write = u < introLeft + writesLeft;
                    if (write)
                    {
                        writesLeft--;
                        version[blob]++;
                        etagOf[blob] = ETag(plan.App, blob, version[blob]);
                        bytesOf[blob] = Math.Round(AzureTraceShape.WriteBlobBytes.Quantile(Seeds.Uniform(_options.Seed, plan.App, (blob << 20) ^ version[blob], 2)));
                    }
                    else
                    {
                        readsLeft--;
                    }
                }

                yield return app.Row(k, invocation, nameOf[blob], etagOf[blob], bytesOf[blob], write);
            }
        }
    }

    /// <summary>Share <paramref name="i"/> of <paramref name="total"/> split as evenly as whole numbers allow over <paramref name="parts"/>.</summary>
    private static long Share(long i, long total, long parts) => (long)(((Int128)(i + 1) * total / parts) - ((Int128)i * total / parts));

    private static long Zipf(Random random, long n)
    {
        const double OneMinusS = 1 - ZipfExponent;
        double top = Math.Pow(n + 1, OneMinusS) - 1;
        double x = Math.Pow((random.NextDouble() * top) + 1, 1 / OneMinusS) - 1;
        return Math.Clamp((long)x, 0, n - 1);
    }

    private static string Name(long blob) => "b" + blob.ToString("x", CultureInfo.InvariantCulture);

    /// <summary>A version's ETag: a hash of (seed, app, blob, version), so no two versions share one.</summary>
    private string ETag(int app, long blob, int version)
        => "0x" + Seeds.Mix(Seeds.Mix(((ulong)(uint)_options.Seed << 32) ^ (uint)app) ^ ((ulong)blob << 16) ^ (uint)version).ToString("X16", CultureInfo.InvariantCulture);

    private static string Hex(int value, int salt) => ((uint)Seeds.Mix(((ulong)(uint)salt << 32) | (uint)value)).ToString("x8", CultureInfo.InvariantCulture)
        + value.ToString("x4", CultureInfo.InvariantCulture);

    /// <summary>One app's identity and clock: its invocations' start times (bursty gaps scaled to its span), its rows.</summary>
    private sealed class AppRows
    {
        private readonly string _appName, _region, _user;
        private readonly Random _gaps;
        private readonly double _scale;
        private double _t;
        private long _start, _last = long.MinValue;

        public AppRows(TraceGenerator generator, AppPlan plan)
        {
            int seed = Seeds.Of(generator._options.Seed, 0x6A95_0000UL + (ulong)plan.App);
            _appName = Hex(plan.App, 0xA);
            _region = "r" + (plan.App % AzureTraceShape.Regions).ToString(CultureInfo.InvariantCulture);
            _user = Hex((int)((long)plan.App * AzureTraceShape.Users / Math.Max(1, generator._options.Apps)), 0xB);
            // Two passes over the same gaps: the first sums them, so that they fill the app's span exactly.
            var sum = new Random(seed);
            double total = 0;
            for (long i = 1; i < plan.Invocations; i++)
            {
                total += Gap(sum);
            }

            _scale = total > 0 ? plan.SpanMs / total : 0;
            _gaps = new Random(seed);
            _t = plan.StartMs;
        }

        public string Invocation(long inv)
        {
            if (inv > 0)
            {
                _t += Gap(_gaps) * _scale;
            }

            _start = AzureTraceShape.StartUnixMs + (long)_t;
            return _appName + "-" + inv.ToString("x", CultureInfo.InvariantCulture);
        }

        /// <summary>A row: accesses of one invocation follow each other by a millisecond; time never goes back.</summary>
        public BlobAccess Row(int k, string invocation, string name, string etag, double bytes, bool write)
        {
            _last = Math.Max(_last, _start + k);
            return new BlobAccess(_last, _region, _user, _appName, invocation, name, "BlockBlob", etag, bytes, !write, write);
        }

        private static double Gap(Random random)
        {
            double u1 = 1 - random.NextDouble(), u2 = random.NextDouble();
            return Math.Exp(GapSigma * Math.Sqrt(-2 * Math.Log(u1)) * Math.Cos(2 * Math.PI * u2));
        }
    }
}
