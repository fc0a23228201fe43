namespace FaaSCache.Scaling.Voters;

/// <summary>The compute voter's metrics.</summary>
public sealed class ComputeScaleMetrics : ScaleMetrics
{
    /// <summary>Gets or sets completed invocations per second over the window.</summary>
    public double PerSecond { get; set; }

    /// <summary>Gets or sets the invocations executing at sampling time.</summary>
    public int InFlight { get; set; }

    /// <summary>Gets or sets the mean latency in milliseconds.</summary>
    public double MeanLatencyMs { get; set; }

    /// <summary>Gets or sets the 99th percentile latency in milliseconds.</summary>
    public double P99LatencyMs { get; set; }

    /// <summary>Gets or sets max(in flight, rate x mean latency).</summary>
    public double Concurrency { get; set; }
}

/// <summary>
/// §4, compute scaling: the instance's request rate, in-flight invocations and latency against
/// <see cref="ScalingOptions.TargetConcurrency"/> (and <see cref="ScalingOptions.TargetLatency"/> when set). Out when the
/// instance carries more than the target, or is busy and slower than the target latency; in when the app's load would
/// fit on one instance fewer at 80% of the target (hysteresis), or when an instance has had nothing to do for the whole
/// window; otherwise none. Its target count spreads the app's concurrency (this instance's times the instance count, as
/// the front door balances by outstanding requests) at the target per instance.
/// </summary>
public sealed class ComputeScaleMonitor : TargetScaleVoter<ComputeScaleMetrics>
{
    /// <summary>The voter's name.</summary>
    public const string VoterName = "compute";

    private const double ScaleInHeadroom = 0.8;
    private readonly InvocationMeter _meter;
    private readonly ScalingOptions _options;
    private int _lastWorkerCount = 1;

    /// <summary>Initializes a new instance of the <see cref="ComputeScaleMonitor"/> class.</summary>
    public ComputeScaleMonitor(InvocationMeter meter, FaaSCacheOptions options, string appName, TimeProvider? time = null)
        : base(VoterName, appName, time)
    {
        ArgumentNullException.ThrowIfNull(meter);
        ArgumentNullException.ThrowIfNull(options);
        _meter = meter;
        _options = options.Scaling;
    }

    /// <inheritdoc />
    public override Task<ComputeScaleMetrics> GetMetricsAsync()
    {
        InvocationSample s = _meter.Sample();
        return Task.FromResult(new ComputeScaleMetrics
        {
            Timestamp = Time.GetUtcNow().UtcDateTime,
            PerSecond = s.PerSecond,
            InFlight = s.InFlight,
            MeanLatencyMs = s.MeanLatency.TotalMilliseconds,
            P99LatencyMs = s.P99Latency.TotalMilliseconds,
            Concurrency = s.Concurrency,
        });
    }

    /// <summary>
    /// The rule for one meter sample, without its words: what the instance votes when it runs <paramref name="workerCount"/>
    /// instances under <paramref name="options"/> (the simulator asks this at every poll).
    /// </summary>
    public static ScaleVote Vote(InvocationSample sample, int workerCount, ScalingOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return VoteOf(Verdict(sample.Concurrency, sample.InFlight, sample.PerSecond, sample.MeanLatency.TotalMilliseconds, workerCount, options));
    }

    /// <summary>
    /// The instance count the app's load wants: this instance's <paramref name="concurrency"/> times the instances, at the
    /// target per instance.
    /// </summary>
    public static int Target(double concurrency, int workers, int? instanceConcurrency, ScalingOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        double perInstance = instanceConcurrency is > 0 ? instanceConcurrency.Value : options.TargetConcurrency;
        return (int)Math.Ceiling(concurrency * workers / perInstance);
    }

    /// <inheritdoc />
    protected override int? VoteTarget(ComputeScaleMetrics metrics, int workerCount)
        => Target(metrics.Concurrency, Math.Max(workerCount, 1), null, _options);

    /// <inheritdoc />
    protected override int ScalerTarget(ComputeScaleMetrics metrics, TargetScalerContext? context)
        => Target(metrics.Concurrency, Volatile.Read(ref _lastWorkerCount), context?.InstanceConcurrency, _options);

    /// <inheritdoc />
    protected override IReadOnlyDictionary<string, double> Numbers(ComputeScaleMetrics metrics) => new Dictionary<string, double>(StringComparer.Ordinal)
    {
        ["perSecond"] = metrics.PerSecond,
        ["inFlight"] = metrics.InFlight,
        ["meanLatencyMs"] = metrics.MeanLatencyMs,
        ["p99LatencyMs"] = metrics.P99LatencyMs,
        ["concurrency"] = metrics.Concurrency,
        ["targetConcurrency"] = _options.TargetConcurrency,
    };

    /// <inheritdoc />
    protected override (ScaleVote Vote, string Reason) Rule(ComputeScaleMetrics metrics, int workerCount)
    {
        int workers = Math.Max(workerCount, 1);
        Volatile.Write(ref _lastWorkerCount, workers);
        double target = _options.TargetConcurrency;
        string load = string.Create(CultureInfo.InvariantCulture, $"concurrency {metrics.Concurrency:0.##} ({metrics.PerSecond:0.##}/s x {metrics.MeanLatencyMs:0.#} ms, {metrics.InFlight} in flight) against a target of {target:0.##} per instance");
        ComputeVerdict verdict = Verdict(metrics.Concurrency, metrics.InFlight, metrics.PerSecond, metrics.MeanLatencyMs, workerCount, _options);
        string reason = verdict switch
        {
            ComputeVerdict.OverTarget => $"out: {load}",
            ComputeVerdict.SlowWhileBusy => string.Create(CultureInfo.InvariantCulture, $"out: mean latency {metrics.MeanLatencyMs:0.#} ms above the target {_options.TargetLatency!.Value.TotalMilliseconds:0.#} ms while busy; {load}"),
            ComputeVerdict.Idle => "in: no invocation in the window",
            ComputeVerdict.FitsOnFewer => string.Create(CultureInfo.InvariantCulture, $"in: the load of {workers} instances fits on {workers - 1} under {ScaleInHeadroom:P0} of the target; {load}"),
            _ => $"none: {load}",
        };
        return (VoteOf(verdict), reason);
    }

    private static ScaleVote VoteOf(ComputeVerdict verdict) => verdict switch
    {
        ComputeVerdict.OverTarget or ComputeVerdict.SlowWhileBusy => ScaleVote.ScaleOut,
        ComputeVerdict.Idle or ComputeVerdict.FitsOnFewer => ScaleVote.ScaleIn,
        _ => ScaleVote.None,
    };

    private static ComputeVerdict Verdict(double concurrency, int inFlight, double perSecond, double meanLatencyMs, int workerCount, ScalingOptions options)
    {
        int workers = Math.Max(workerCount, 1);
        double target = options.TargetConcurrency;
        if (concurrency > target)
        {
            return ComputeVerdict.OverTarget;
        }

        if (options.TargetLatency is { } latency && inFlight > 0 && meanLatencyMs > latency.TotalMilliseconds)
        {
            return ComputeVerdict.SlowWhileBusy;
        }

        if (inFlight == 0 && perSecond == 0)
        {
            return ComputeVerdict.Idle;
        }

        return workers > 1 && concurrency * workers / (workers - 1) < ScaleInHeadroom * target ? ComputeVerdict.FitsOnFewer : ComputeVerdict.Steady;
    }

    /// <summary>Which branch of the rule a sample takes.</summary>
    private enum ComputeVerdict
    {
        /// <summary>More concurrency than the target: out.</summary>
        OverTarget,

        /// <summary>Busy and slower than the target latency: out.</summary>
        SlowWhileBusy,

        /// <summary>Nothing in the window: in.</summary>
        Idle,

        /// <summary>The load fits on one instance fewer with headroom: in.</summary>
        FitsOnFewer,

        /// <summary>None.</summary>
        Steady,
    }
}
