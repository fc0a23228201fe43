namespace FaaSCache.Keda;

/// <summary>A ScaledObject's replica bounds as KEDA applies them: <c>minReplicaCount</c>, <c>maxReplicaCount</c>, <c>idleReplicaCount</c>.</summary>
public sealed record KedaReplicaLimits
{
    /// <summary>Creates the bounds; throws when KEDA would refuse the ScaledObject (naming the field, the value and what is allowed).</summary>
    public KedaReplicaLimits(int minReplicaCount, int maxReplicaCount, int? idleReplicaCount = null)
    {
        if (minReplicaCount < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(minReplicaCount), minReplicaCount, "minReplicaCount must be >= 0");
        }

        if (maxReplicaCount < Math.Max(1, minReplicaCount))
        {
            throw new ArgumentOutOfRangeException(nameof(maxReplicaCount), maxReplicaCount, $"maxReplicaCount must be >= max(1, minReplicaCount = {minReplicaCount})");
        }

        // KEDA's admission rule: the idle count lies below the minimum (in practice 0).
        if (idleReplicaCount is int idle && (idle < 0 || idle >= minReplicaCount))
        {
            throw new ArgumentOutOfRangeException(nameof(idleReplicaCount), idleReplicaCount, $"idleReplicaCount must be >= 0 and < minReplicaCount ({minReplicaCount})");
        }

        MinReplicaCount = minReplicaCount;
        MaxReplicaCount = maxReplicaCount;
        IdleReplicaCount = idleReplicaCount;
    }

    /// <summary>Gets the fewest replicas while active (the HPA's minReplicas is max(1, this)).</summary>
    public int MinReplicaCount { get; }

    /// <summary>Gets the most replicas (the HPA's maxReplicas).</summary>
    public int MaxReplicaCount { get; }

    /// <summary>Gets the replicas while inactive, when set (0 for scale to zero with a minimum above it).</summary>
    public int? IdleReplicaCount { get; }
}
