namespace FaaSCache.Scaling.Voters;

/// <summary>
/// A voter with a natural instance count (compute, bandwidth), which it also reports as a WebJobs target scaler under the
/// same id as its monitor.
/// </summary>
/// <typeparam name="TMetrics">The voter's metrics.</typeparam>
public abstract class TargetScaleVoter<TMetrics> : ScaleVoter<TMetrics>, ITargetScaler
    where TMetrics : ScaleMetrics
{
    /// <summary>Initializes a new instance of the <see cref="TargetScaleVoter{TMetrics}"/> class.</summary>
    /// <param name="name">The voter's name.</param>
    /// <param name="appName">The app the instance runs.</param>
    /// <param name="time">The clock the samples are stamped with; the system's when null.</param>
    protected TargetScaleVoter(string name, string appName, TimeProvider? time)
        : base(name, appName, time)
        => TargetScalerDescriptor = new TargetScalerDescriptor(Descriptor.FunctionId);

    /// <inheritdoc />
    public TargetScalerDescriptor TargetScalerDescriptor { get; }

    /// <inheritdoc />
    public async Task<TargetScalerResult> GetScaleResultAsync(TargetScalerContext context)
        => new() { TargetWorkerCount = ScalerTarget(await GetMetricsAsync().ConfigureAwait(false), context) };

    /// <summary>The instance count the voter wants when the WebJobs host asks it as a target scaler.</summary>
    /// <param name="metrics">A fresh sample.</param>
    /// <param name="context">The host's context (its per-instance concurrency, when it has one).</param>
    /// <returns>The count.</returns>
    protected abstract int ScalerTarget(TMetrics metrics, TargetScalerContext? context);
}
