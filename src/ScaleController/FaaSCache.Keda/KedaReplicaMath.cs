namespace FaaSCache.Keda;

/// <summary>
/// The replica count KEDA and the HPA it creates reach for one external metric of type AverageValue: KEDA owns
/// 0 &lt;-&gt; active (from IsActive, with idle/min replica counts), the HPA owns 1..max (ceil(total / target) unless
/// the ratio is within its tolerance). Used by the contract test and by the controller's status ("pods KEDA would run").
/// Stabilization windows and cool-downs (time) are left out: this is where the counts settle, not when.
/// </summary>
public static class KedaReplicaMath
{
    /// <summary>The HPA's default tolerance (kube-controller-manager <c>--horizontal-pod-autoscaler-tolerance</c>).</summary>
    public const double DefaultTolerance = 0.1;

    /// <summary>
    /// One HPA step for an external AverageValue metric (Kubernetes' GetExternalPerPodMetricReplicas):
    /// keep <paramref name="currentReplicas"/> when |1 - total / (target x current)| is within the tolerance, else
    /// ceil(total / target), clamped to max(1, min)..max.
    /// </summary>
    public static int HpaReplicas(double metricTotal, double target, int currentReplicas, KedaReplicaLimits limits, double tolerance = DefaultTolerance)
    {
        ArgumentNullException.ThrowIfNull(limits);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(target);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(currentReplicas);
        ArgumentOutOfRangeException.ThrowIfNegative(metricTotal);
        double usageRatio = metricTotal / (target * currentReplicas);
        int wanted = Math.Abs(1.0 - usageRatio) <= tolerance ? currentReplicas : (int)Math.Ceiling(metricTotal / target);
        return Math.Clamp(wanted, Math.Max(1, limits.MinReplicaCount), limits.MaxReplicaCount);
    }

    /// <summary>
    /// One reconcile of KEDA and then the HPA: inactive goes to idleReplicaCount (or 0 when the minimum is 0), else
    /// stays at least at the minimum under the HPA; active from 0 (or from idle) goes to max(1, min) first (KEDA's
    /// activation), after which the HPA decides.
    /// </summary>
    public static int NextReplicas(double metricTotal, double target, bool isActive, int currentReplicas, KedaReplicaLimits limits, double tolerance = DefaultTolerance)
    {
        ArgumentNullException.ThrowIfNull(limits);
        ArgumentOutOfRangeException.ThrowIfNegative(currentReplicas);
        if (!isActive)
        {
            if (limits.IdleReplicaCount is int idle)
            {
                return idle;
            }

            if (limits.MinReplicaCount == 0)
            {
                return 0;
            }
        }
        else if (currentReplicas == 0 || currentReplicas == limits.IdleReplicaCount)
        {
            return Math.Max(1, limits.MinReplicaCount);
        }

        return currentReplicas == 0
            ? Math.Max(1, limits.MinReplicaCount)
            : HpaReplicas(metricTotal, target, currentReplicas, limits, tolerance);
    }

    /// <summary>Repeats <see cref="NextReplicas"/> from <paramref name="currentReplicas"/> until the count stops changing: where KEDA and the HPA settle.</summary>
    public static int SettledReplicas(double metricTotal, double target, bool isActive, int currentReplicas, KedaReplicaLimits limits, double tolerance = DefaultTolerance)
    {
        ArgumentNullException.ThrowIfNull(limits);
        int replicas = currentReplicas;

        // The HPA jumps to ceil(total / target) in one step, so a few rounds settle; the bound guards a non-converging input.
        for (int round = 0; round < 2 + limits.MaxReplicaCount; round++)
        {
            int next = NextReplicas(metricTotal, target, isActive, replicas, limits, tolerance);
            if (next == replicas)
            {
                return replicas;
            }

            replicas = next;
        }

        throw new InvalidOperationException($"KEDA/HPA replicas did not settle from {currentReplicas} (metric {metricTotal}, target {target}, active {isActive})");
    }
}
