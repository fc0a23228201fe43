namespace FaaSCache.Scaling.Voters;

/// <summary>
/// §4: what the three voters share, as WebJobs scale monitors: the descriptor (<c>faascache-&lt;voter&gt;-&lt;app&gt;</c>),
/// the scale status from the last sample, and the answer with its reason and numbers. A voter adds only how it samples
/// its metrics and its rule; one with a natural instance count derives from <see cref="TargetScaleVoter{TMetrics}"/>.
/// </summary>
/// <typeparam name="TMetrics">The voter's metrics.</typeparam>
public abstract class ScaleVoter<TMetrics> : IScaleMonitor<TMetrics>, IFaaSCacheVoter
    where TMetrics : ScaleMetrics
{
    /// <summary>Initializes a new instance of the <see cref="ScaleVoter{TMetrics}"/> class.</summary>
    /// <param name="name">The voter's name (compute, cacheSize or bandwidth).</param>
    /// <param name="appName">The app the instance runs.</param>
    /// <param name="time">The clock the samples are stamped with; the system's when null.</param>
    protected ScaleVoter(string name, string appName, TimeProvider? time)
    {
        Name = name;
        Time = time ?? TimeProvider.System;
        string id = $"faascache-{name}-{appName}";
        Descriptor = new ScaleMonitorDescriptor(id, id);
    }

    /// <inheritdoc />
    public string Name { get; }

    /// <inheritdoc />
    public ScaleMonitorDescriptor Descriptor { get; }

    /// <summary>Gets the clock the samples are stamped with.</summary>
    protected TimeProvider Time { get; }

    /// <summary>Samples the voter's metrics afresh.</summary>
    /// <returns>The sample, stamped with <see cref="Time"/>.</returns>
    public abstract Task<TMetrics> GetMetricsAsync();

    /// <inheritdoc />
    async Task<ScaleMetrics> IScaleMonitor.GetMetricsAsync() => await GetMetricsAsync().ConfigureAwait(false);

    /// <inheritdoc />
    public ScaleStatus GetScaleStatus(ScaleStatusContext<TMetrics> context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return new ScaleStatus { Vote = Decide(context.Metrics?.LastOrDefault(), context.WorkerCount).Vote };
    }

    /// <inheritdoc />
    public ScaleStatus GetScaleStatus(ScaleStatusContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return new ScaleStatus { Vote = Decide(context.Metrics?.OfType<TMetrics>().LastOrDefault(), context.WorkerCount).Vote };
    }

    /// <inheritdoc />
    public async Task<VoterResult> VoteAsync(int workerCount)
    {
        TMetrics metrics = await GetMetricsAsync().ConfigureAwait(false);
        (ScaleVote vote, string reason) = Decide(metrics, workerCount);
        return new VoterResult(Name, vote, VoteTarget(metrics, workerCount), reason, Numbers(metrics));
    }

    /// <summary>The vote for one sample, with its reason; none while nothing was sampled.</summary>
    internal (ScaleVote Vote, string Reason) Decide(TMetrics? metrics, int workerCount)
        => metrics is null ? (ScaleVote.None, "no metrics sampled yet") : Rule(metrics, workerCount);

    /// <summary>The voter's rule for one sample, with its reason in words and numbers.</summary>
    /// <param name="metrics">The sample.</param>
    /// <param name="workerCount">The instances the app runs.</param>
    /// <returns>The vote and why.</returns>
    protected abstract (ScaleVote Vote, string Reason) Rule(TMetrics metrics, int workerCount);

    /// <summary>The instance count the voter wants with its vote, when it has a natural one (none by default).</summary>
    /// <param name="metrics">The sample.</param>
    /// <param name="workerCount">The instances the app runs.</param>
    /// <returns>The count, or null.</returns>
    protected virtual int? VoteTarget(TMetrics metrics, int workerCount) => null;

    /// <summary>The numbers the answer reports, by their names in the scale status.</summary>
    /// <param name="metrics">The sample.</param>
    /// <returns>The numbers.</returns>
    protected abstract IReadOnlyDictionary<string, double> Numbers(TMetrics metrics);
}
