namespace FaaSCache.Scaling.Voters;

/// <summary>The bandwidth voter's metrics.</summary>
public sealed class BandwidthScaleMetrics : ScaleMetrics
{
    /// <summary>Gets or sets the scaled loads running or finished within the hold window.</summary>
    public int RecentLoads { get; set; }

    /// <summary>Gets or sets the largest N planned by a load within the hold window (0 when none).</summary>
    public int LargestPlanned { get; set; }

    /// <summary>Gets or sets the measured storage rate, MB/s (0 when not measured).</summary>
    public double StorageMBps { get; set; }

    /// <summary>Gets or sets the measured instance-to-instance rate, MB/s (0 when not measured).</summary>
    public double PeerMBps { get; set; }

    /// <summary>Gets or sets the measured instance start time, seconds (0 when not measured).</summary>
    public double InstanceLoadSeconds { get; set; }
}

/// <summary>
/// §4, bandwidth scaling, the voting half: scale-out for a large miss is urgent and goes to the controller unasked the
/// moment the planner wants more instances (see the cachelet's scaled loads); here, when asked, the voter holds the
/// instances such loads used while they keep coming (none, with the largest planned N as its target), votes out if a
/// recent load wanted more instances than run, and votes in once no scaled load ran for <see cref="HoldWindow"/>
/// ("as the number of object accesses becomes small"). A load still running counts as recent: the instances it asked for
/// are held while it runs (before, a 6 s load's helper was scaled in halfway and another started once it was recorded).
/// </summary>
public sealed class BandwidthScaleMonitor : TargetScaleVoter<BandwidthScaleMetrics>
{
    /// <summary>The voter's name.</summary>
    public const string VoterName = "bandwidth";

    /// <summary>How long after a scaled load its instances are held.</summary>
    public static readonly TimeSpan HoldWindow = TimeSpan.FromSeconds(60);

    private readonly BandwidthScaler _scaler;

    /// <summary>Initializes a new instance of the <see cref="BandwidthScaleMonitor"/> class.</summary>
    public BandwidthScaleMonitor(BandwidthScaler scaler, string appName, TimeProvider? time = null)
        : base(VoterName, appName, time)
    {
        ArgumentNullException.ThrowIfNull(scaler);
        _scaler = scaler;
    }

    /// <inheritdoc />
    public override Task<BandwidthScaleMetrics> GetMetricsAsync()
    {
        // Loads running now count as recent: their instances are held from the start, not only once they finished.
        int[] planned = [.. _scaler.Recent(HoldWindow).Select(r => r.Planned), .. _scaler.RunningPlans()];
        TransferProfile p = _scaler.Profiler.Current;
        return Task.FromResult(new BandwidthScaleMetrics
        {
            Timestamp = Time.GetUtcNow().UtcDateTime,
            RecentLoads = planned.Length,
            LargestPlanned = planned.Length == 0 ? 0 : planned.Max(),
            StorageMBps = (p.StorageBytesPerSecond ?? 0) / 1e6,
            PeerMBps = (p.PeerBytesPerSecond ?? 0) / 1e6,
            InstanceLoadSeconds = p.InstanceLoad?.TotalSeconds ?? 0,
        });
    }

    /// <summary>
    /// The rule for one sample, without its words: what the instance votes with <paramref name="recentLoads"/> scaled loads
    /// in the <see cref="HoldWindow"/>, the largest planning <paramref name="largestPlanned"/> instances, when it runs
    /// <paramref name="workerCount"/> (the simulator asks this at every poll).
    /// </summary>
    public static ScaleVote Vote(int recentLoads, int largestPlanned, int workerCount)
        => recentLoads == 0 ? ScaleVote.ScaleIn : largestPlanned > workerCount ? ScaleVote.ScaleOut : ScaleVote.None;

    /// <inheritdoc />
    protected override int? VoteTarget(BandwidthScaleMetrics metrics, int workerCount) => metrics.LargestPlanned;

    /// <inheritdoc />
    protected override int ScalerTarget(BandwidthScaleMetrics metrics, TargetScalerContext? context) => metrics.LargestPlanned;

    /// <inheritdoc />
    protected override IReadOnlyDictionary<string, double> Numbers(BandwidthScaleMetrics metrics) => new Dictionary<string, double>(StringComparer.Ordinal)
    {
        ["recentLoads"] = metrics.RecentLoads,
        ["largestPlanned"] = metrics.LargestPlanned,
        ["storageMBps"] = metrics.StorageMBps,
        ["peerMBps"] = metrics.PeerMBps,
        ["instanceLoadSeconds"] = metrics.InstanceLoadSeconds,
    };

    /// <inheritdoc />
    protected override (ScaleVote Vote, string Reason) Rule(BandwidthScaleMetrics metrics, int workerCount)
    {
        string window = string.Create(CultureInfo.InvariantCulture, $"{metrics.RecentLoads} scaled load(s) running or in the last {HoldWindow.TotalSeconds:0} s");
        ScaleVote vote = Vote(metrics.RecentLoads, metrics.LargestPlanned, workerCount);
        return (vote, vote switch
        {
            ScaleVote.ScaleIn => $"in: {window}",
            ScaleVote.ScaleOut => string.Create(CultureInfo.InvariantCulture, $"out: {window}, one planned {metrics.LargestPlanned} instances and {workerCount} run"),
            _ => string.Create(CultureInfo.InvariantCulture, $"none: {window}, holding up to {metrics.LargestPlanned} instances"),
        });
    }
}
