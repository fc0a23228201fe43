using System.Globalization;
using FaaSCache.Bandwidth;
using Microsoft.Azure.WebJobs.Host.Scale;

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
public sealed class BandwidthScaleMonitor : IScaleMonitor<BandwidthScaleMetrics>, ITargetScaler, IFaaSCacheVoter
{
    /// <summary>The voter's name.</summary>
    public const string VoterName = "bandwidth";

    /// <summary>How long after a scaled load its instances are held.</summary>
    public static readonly TimeSpan HoldWindow = TimeSpan.FromSeconds(60);

    private readonly BandwidthScaler _scaler;
    private readonly TimeProvider _time;

    /// <summary>Initializes a new instance of the <see cref="BandwidthScaleMonitor"/> class.</summary>
    public BandwidthScaleMonitor(BandwidthScaler scaler, string appName, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(scaler);
        _scaler = scaler;
        _time = time ?? TimeProvider.System;
        Descriptor = new ScaleMonitorDescriptor($"faascache-{VoterName}-{appName}", $"faascache-{VoterName}-{appName}");
        TargetScalerDescriptor = new TargetScalerDescriptor($"faascache-{VoterName}-{appName}");
    }

    /// <inheritdoc />
    public string Name => VoterName;

    /// <inheritdoc />
    public ScaleMonitorDescriptor Descriptor { get; }

    /// <inheritdoc />
    public TargetScalerDescriptor TargetScalerDescriptor { get; }

    /// <inheritdoc />
    public Task<BandwidthScaleMetrics> GetMetricsAsync()
    {
        // Loads running now count as recent: their instances are held from the start, not only once they finished.
        int[] planned = [.. _scaler.Recent(HoldWindow).Select(r => r.Planned), .. _scaler.RunningPlans()];
        TransferProfile p = _scaler.Profiler.Current;
        return Task.FromResult(new BandwidthScaleMetrics
        {
            Timestamp = _time.GetUtcNow().UtcDateTime,
            RecentLoads = planned.Length,
            LargestPlanned = planned.Length == 0 ? 0 : planned.Max(),
            StorageMBps = (p.StorageBytesPerSecond ?? 0) / 1e6,
            PeerMBps = (p.PeerBytesPerSecond ?? 0) / 1e6,
            InstanceLoadSeconds = p.InstanceLoad?.TotalSeconds ?? 0,
        });
    }

    /// <inheritdoc />
    async Task<ScaleMetrics> IScaleMonitor.GetMetricsAsync() => await GetMetricsAsync().ConfigureAwait(false);

    /// <inheritdoc />
    public ScaleStatus GetScaleStatus(ScaleStatusContext<BandwidthScaleMetrics> context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return new ScaleStatus { Vote = Decide(context.Metrics?.LastOrDefault(), context.WorkerCount).Vote };
    }

    /// <inheritdoc />
    public ScaleStatus GetScaleStatus(ScaleStatusContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return new ScaleStatus { Vote = Decide(context.Metrics?.OfType<BandwidthScaleMetrics>().LastOrDefault(), context.WorkerCount).Vote };
    }

    /// <inheritdoc />
    public async Task<TargetScalerResult> GetScaleResultAsync(TargetScalerContext context)
        => new() { TargetWorkerCount = (await GetMetricsAsync().ConfigureAwait(false)).LargestPlanned };

    /// <inheritdoc />
    public async Task<VoterResult> VoteAsync(int workerCount)
    {
        BandwidthScaleMetrics m = await GetMetricsAsync().ConfigureAwait(false);
        (ScaleVote vote, string reason) = Decide(m, workerCount);
        return new VoterResult(VoterName, vote, m.LargestPlanned, reason, new Dictionary<string, double>(StringComparer.Ordinal)
        {
            ["recentLoads"] = m.RecentLoads,
            ["largestPlanned"] = m.LargestPlanned,
            ["storageMBps"] = m.StorageMBps,
            ["peerMBps"] = m.PeerMBps,
            ["instanceLoadSeconds"] = m.InstanceLoadSeconds,
        });
    }

    /// <summary>
    /// The rule for one sample, without its words: what the instance votes with <paramref name="recentLoads"/> scaled loads
    /// in the <see cref="HoldWindow"/>, the largest planning <paramref name="largestPlanned"/> instances, when it runs
    /// <paramref name="workerCount"/> (the simulator asks this at every poll).
    /// </summary>
    public static ScaleVote Vote(int recentLoads, int largestPlanned, int workerCount)
        => recentLoads == 0 ? ScaleVote.ScaleIn : largestPlanned > workerCount ? ScaleVote.ScaleOut : ScaleVote.None;

    /// <summary>The vote for one sample, with its reason.</summary>
    internal static (ScaleVote Vote, string Reason) Decide(BandwidthScaleMetrics? m, int workerCount)
    {
        if (m is null)
        {
            return (ScaleVote.None, "no metrics sampled yet");
        }

        string window = string.Create(CultureInfo.InvariantCulture, $"{m.RecentLoads} scaled load(s) running or in the last {HoldWindow.TotalSeconds:0} s");
        ScaleVote vote = Vote(m.RecentLoads, m.LargestPlanned, workerCount);
        return (vote, vote switch
        {
            ScaleVote.ScaleIn => $"in: {window}",
            ScaleVote.ScaleOut => string.Create(CultureInfo.InvariantCulture, $"out: {window}, one planned {m.LargestPlanned} instances and {workerCount} run"),
            _ => string.Create(CultureInfo.InvariantCulture, $"none: {window}, holding up to {m.LargestPlanned} instances"),
        });
    }
}
