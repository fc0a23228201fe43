using FaaSCache.Caching;

namespace FaaSCache.Scaling.Voters;

/// <summary>The cache-size voter's metrics, over the span since the previous sample.</summary>
public sealed class CacheSizeScaleMetrics : ScaleMetrics
{
    /// <summary>Gets or sets the most evictions of one object since the previous sample.</summary>
    public long MaxEvictionsOfOneObject { get; set; }

    /// <summary>Gets or sets how many objects were evicted since the previous sample.</summary>
    public long ObjectsEvicted { get; set; }

    /// <summary>Gets or sets the reads, since the previous sample, of objects the Memory Daemon had evicted (§3.4).</summary>
    public long ReadsAfterMemoryEviction { get; set; }

    /// <summary>Gets or sets the accesses (own functions' and peers') since the previous sample.</summary>
    public long Accesses { get; set; }

    /// <summary>Gets or sets the seconds since the previous sample.</summary>
    public double IntervalSeconds { get; set; }

    /// <summary>Gets the access rate per second.</summary>
    public double AccessesPerSecond => IntervalSeconds > 0 ? Accesses / IntervalSeconds : 0;
}

/// <summary>
/// §4, cache-size scaling, as the paper states it: +1 if any local object was evicted more than once since the last
/// query (the working set does not fit); 0 while traffic is substantial; -1 when the access frequency is low (below
/// <see cref="ScalingOptions.LowAccessRate"/>). Also +1 when objects the Memory Daemon evicted (§3.4) are read again: the
/// working set does not fit beside the functions' memory. Reads the cachelet's per-object statistics.
/// </summary>
public sealed class CacheSizeScaleMonitor : ScaleVoter<CacheSizeScaleMetrics>
{
    /// <summary>The voter's name.</summary>
    public const string VoterName = "cacheSize";

    private readonly ICacheAdmin _cache;
    private readonly ScalingOptions _options;
    private readonly Lock _gate = new();
    private Dictionary<string, long> _evictions = new(StringComparer.Ordinal);
    private Dictionary<string, long> _rereads = new(StringComparer.Ordinal);
    private long _accesses;
    private DateTimeOffset _previous;

    /// <summary>Initializes a new instance of the <see cref="CacheSizeScaleMonitor"/> class.</summary>
    public CacheSizeScaleMonitor(ICacheAdmin cache, string appName, TimeProvider? time = null)
        : base(VoterName, appName, time)
    {
        ArgumentNullException.ThrowIfNull(cache);
        _cache = cache;
        _options = cache.Options.Scaling;
        _previous = Time.GetUtcNow();
        Baseline(_cache.GetAllStatistics());
    }

    /// <inheritdoc />
    public override Task<CacheSizeScaleMetrics> GetMetricsAsync()
    {
        IReadOnlyList<ObjectStatistics> all = _cache.GetAllStatistics();
        DateTimeOffset now = Time.GetUtcNow();
        lock (_gate)
        {
            long max = 0, evicted = 0, accesses = 0, rereads = 0;
            foreach (ObjectStatistics s in all)
            {
                long since = s.Evictions - _evictions.GetValueOrDefault(s.Key);
                if (since > 0)
                {
                    evicted++;
                    max = Math.Max(max, since);
                }

                rereads += Math.Max(0, s.ReadsAfterMemoryEviction - _rereads.GetValueOrDefault(s.Key));
                accesses += s.Accesses + s.PeerAccesses;
            }

            var metrics = new CacheSizeScaleMetrics
            {
                Timestamp = now.UtcDateTime,
                MaxEvictionsOfOneObject = max,
                ObjectsEvicted = evicted,
                ReadsAfterMemoryEviction = rereads,
                Accesses = Math.Max(0, accesses - _accesses),
                IntervalSeconds = (now - _previous).TotalSeconds,
            };
            Baseline(all);
            _previous = now;
            return Task.FromResult(metrics);
        }
    }

    /// <summary>
    /// The paper's rule for one interval, without its words: what the instance votes under <paramref name="options"/> (the
    /// simulator asks this at every poll, with the numbers counted on its simulated cachelet).
    /// </summary>
    /// <param name="maxEvictionsOfOneObject">The most evictions of one object since the last query.</param>
    /// <param name="readsAfterMemoryEviction">Reads since the last query of objects the Memory Daemon evicted.</param>
    /// <param name="accessesPerSecond">Accesses (own and peers') per second since the last query.</param>
    /// <param name="options">host.json's scaling section.</param>
    public static ScaleVote Vote(long maxEvictionsOfOneObject, long readsAfterMemoryEviction, double accessesPerSecond, ScalingOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return VoteOf(Verdict(maxEvictionsOfOneObject, readsAfterMemoryEviction, accessesPerSecond, options));
    }

    /// <inheritdoc />
    protected override IReadOnlyDictionary<string, double> Numbers(CacheSizeScaleMetrics metrics) => new Dictionary<string, double>(StringComparer.Ordinal)
    {
        ["maxEvictionsOfOneObject"] = metrics.MaxEvictionsOfOneObject,
        ["objectsEvicted"] = metrics.ObjectsEvicted,
        ["readsAfterMemoryEviction"] = metrics.ReadsAfterMemoryEviction,
        ["accessesPerSecond"] = metrics.AccessesPerSecond,
        ["intervalSeconds"] = metrics.IntervalSeconds,
        ["bytesCached"] = _cache.Metrics.Snapshot().BytesCached,
        ["capacityBytes"] = _cache.CapacityBytes,
    };

    /// <inheritdoc />
    protected override (ScaleVote Vote, string Reason) Rule(CacheSizeScaleMetrics metrics, int workerCount)
    {
        CacheSizeVerdict verdict = Verdict(metrics.MaxEvictionsOfOneObject, metrics.ReadsAfterMemoryEviction, metrics.AccessesPerSecond, _options);
        string rate = string.Create(CultureInfo.InvariantCulture, $"{metrics.AccessesPerSecond:0.###} accesses/s over {metrics.IntervalSeconds:0.#} s (low below {_options.LowAccessRate:0.###}/s)");
        string reason = verdict switch
        {
            CacheSizeVerdict.EvictedTwice => string.Create(CultureInfo.InvariantCulture, $"out: an object was evicted {metrics.MaxEvictionsOfOneObject} times since the last query ({metrics.ObjectsEvicted} object(s) evicted): the working set does not fit"),
            CacheSizeVerdict.ReadAfterMemoryEviction => string.Create(CultureInfo.InvariantCulture, $"out: {metrics.ReadsAfterMemoryEviction} read(s) since the last query of objects the Memory Daemon evicted: the working set does not fit beside the functions' memory"),
            CacheSizeVerdict.LowRate => $"in: low access frequency, {rate}",
            _ => $"none: no object evicted twice; substantial traffic, {rate}",
        };
        return (VoteOf(verdict), reason);
    }

    private static ScaleVote VoteOf(CacheSizeVerdict verdict) => verdict switch
    {
        CacheSizeVerdict.EvictedTwice or CacheSizeVerdict.ReadAfterMemoryEviction => ScaleVote.ScaleOut,
        CacheSizeVerdict.LowRate => ScaleVote.ScaleIn,
        _ => ScaleVote.None,
    };

    private static CacheSizeVerdict Verdict(long maxEvictionsOfOneObject, long readsAfterMemoryEviction, double accessesPerSecond, ScalingOptions options)
    {
        if (maxEvictionsOfOneObject > 1)
        {
            return CacheSizeVerdict.EvictedTwice;
        }

        if (readsAfterMemoryEviction > 0)
        {
            return CacheSizeVerdict.ReadAfterMemoryEviction;
        }

        return accessesPerSecond < options.LowAccessRate ? CacheSizeVerdict.LowRate : CacheSizeVerdict.Substantial;
    }

    private void Baseline(IReadOnlyList<ObjectStatistics> all)
    {
        _evictions = all.Where(s => s.Evictions > 0).ToDictionary(s => s.Key, s => s.Evictions, StringComparer.Ordinal);
        _rereads = all.Where(s => s.ReadsAfterMemoryEviction > 0).ToDictionary(s => s.Key, s => s.ReadsAfterMemoryEviction, StringComparer.Ordinal);
        _accesses = all.Sum(s => s.Accesses + s.PeerAccesses);
    }

    /// <summary>Which branch of the rule a sample takes.</summary>
    private enum CacheSizeVerdict
    {
        /// <summary>An object was evicted more than once since the last query: out.</summary>
        EvictedTwice,

        /// <summary>Objects the Memory Daemon evicted were read again: out.</summary>
        ReadAfterMemoryEviction,

        /// <summary>Few accesses: in.</summary>
        LowRate,

        /// <summary>Substantial traffic and nothing evicted twice: none.</summary>
        Substantial,
    }
}
