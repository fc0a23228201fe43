namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// KEDA's ScaledObject (keda.sh/v1alpha1), the fields this tool writes: KEDA scales the host Deployment by the scale
/// controller's decision, one external metric (the desired instance count) with targetValue 1, one pod per instance the
/// votes want; activation (0 to 1 pod) from IsActive. Property names are written camelCase, as KEDA's are.
/// </summary>
public sealed class ScaledObject
{
    /// <summary>Gets the API version.</summary>
    public string ApiVersion { get; init; } = "keda.sh/v1alpha1";

    /// <summary>Gets the kind.</summary>
    public string Kind { get; init; } = "ScaledObject";

    /// <summary>Gets the metadata.</summary>
    public required V1ObjectMeta Metadata { get; init; }

    /// <summary>Gets the spec.</summary>
    public required ScaledObjectSpec Spec { get; init; }

    /// <summary>The ScaledObject of an app's hosts, reaching its controller's gRPC port by the Service's full name.</summary>
    public static ScaledObject For(KubernetesNames names, int maxReplicas)
    {
        ArgumentNullException.ThrowIfNull(names);
        return new ScaledObject
        {
            Metadata = names.Metadata(names.Hosts),
            Spec = new ScaledObjectSpec
            {
                ScaleTargetRef = new ScaleTarget { ApiVersion = "apps/v1", Kind = "Deployment", Name = names.Hosts },
                PollingInterval = 5,
                CooldownPeriod = 60,
                // Idle apps go to zero pods; active ones keep at least one.
                IdleReplicaCount = 0,
                MinReplicaCount = 1,
                MaxReplicaCount = maxReplicas,
                Triggers =
                [
                    new ScaleTrigger
                    {
                        Type = "external",
                        MetricType = "AverageValue",
                        Metadata = new Dictionary<string, string>(StringComparer.Ordinal)
                        {
                            // KEDA runs in its own namespace: the Service's full name.
                            ["scalerAddress"] = $"{names.ControllerHost}:{KubernetesNames.ControllerGrpcPort.ToString(CultureInfo.InvariantCulture)}",
                            ["app"] = names.App,
                            ["targetValue"] = "1",
                        },
                    },
                ],
            },
        };
    }
}

/// <summary>A ScaledObject's spec.</summary>
public sealed class ScaledObjectSpec
{
    /// <summary>Gets what is scaled.</summary>
    public required ScaleTarget ScaleTargetRef { get; init; }

    /// <summary>Gets the seconds between KEDA's polls.</summary>
    public int? PollingInterval { get; init; }

    /// <summary>Gets the seconds after the last active poll before KEDA goes to the idle count.</summary>
    public int? CooldownPeriod { get; init; }

    /// <summary>Gets the replicas while inactive.</summary>
    public int? IdleReplicaCount { get; init; }

    /// <summary>Gets the fewest replicas while active.</summary>
    public int? MinReplicaCount { get; init; }

    /// <summary>Gets the most replicas.</summary>
    public int? MaxReplicaCount { get; init; }

    /// <summary>Gets the triggers.</summary>
    public required IList<ScaleTrigger> Triggers { get; init; }
}

/// <summary>What a ScaledObject scales.</summary>
public sealed class ScaleTarget
{
    /// <summary>Gets the target's API version.</summary>
    public required string ApiVersion { get; init; }

    /// <summary>Gets the target's kind.</summary>
    public required string Kind { get; init; }

    /// <summary>Gets the target's name.</summary>
    public required string Name { get; init; }
}

/// <summary>One trigger of a ScaledObject.</summary>
public sealed class ScaleTrigger
{
    /// <summary>Gets the scaler type.</summary>
    public required string Type { get; init; }

    /// <summary>Gets the HPA metric type.</summary>
    public required string MetricType { get; init; }

    /// <summary>Gets the metadata KEDA passes to the scaler.</summary>
    public required IDictionary<string, string> Metadata { get; init; }
}
