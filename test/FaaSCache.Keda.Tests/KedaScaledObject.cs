using System.Text.Json.Serialization;
using k8s;
using k8s.Models;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// KEDA's ScaledObject (keda.sh/v1alpha1) as far as deploy/kubernetes uses it: a custom resource the KubernetesClient
/// library has no model for, loaded through its type map. Loaded strictly, so a field not modelled here is an error.
/// </summary>
public sealed class KedaScaledObject : IKubernetesObject<V1ObjectMeta>
{
    /// <summary>The type map key KubernetesYaml looks up: apiVersion/kind.</summary>
    public const string TypeKey = "keda.sh/v1alpha1/ScaledObject";

    [JsonPropertyName("apiVersion")]
    public string ApiVersion { get; set; } = "";

    [JsonPropertyName("kind")]
    public string Kind { get; set; } = "";

    [JsonPropertyName("metadata")]
    public V1ObjectMeta Metadata { get; set; } = new();

    [JsonPropertyName("spec")]
    public KedaScaledObjectSpec Spec { get; set; } = new();
}

/// <summary>A ScaledObject's spec (the fields KEDA documents for ScaledObjectSpec that the manifests set).</summary>
public sealed class KedaScaledObjectSpec
{
    [JsonPropertyName("scaleTargetRef")]
    public KedaScaleTarget ScaleTargetRef { get; set; } = new();

    [JsonPropertyName("pollingInterval")]
    public int? PollingInterval { get; set; }

    [JsonPropertyName("cooldownPeriod")]
    public int? CooldownPeriod { get; set; }

    [JsonPropertyName("idleReplicaCount")]
    public int? IdleReplicaCount { get; set; }

    [JsonPropertyName("minReplicaCount")]
    public int? MinReplicaCount { get; set; }

    [JsonPropertyName("maxReplicaCount")]
    public int? MaxReplicaCount { get; set; }

    [JsonPropertyName("triggers")]
    public List<KedaTrigger> Triggers { get; set; } = [];
}

/// <summary>What a ScaledObject scales (a Deployment by default).</summary>
public sealed class KedaScaleTarget
{
    [JsonPropertyName("apiVersion")]
    public string? ApiVersion { get; set; }

    [JsonPropertyName("kind")]
    public string? Kind { get; set; }

    [JsonPropertyName("name")]
    public string Name { get; set; } = "";
}

/// <summary>One trigger: its type, the HPA metric type and the metadata block KEDA passes to the scaler.</summary>
public sealed class KedaTrigger
{
    [JsonPropertyName("type")]
    public string Type { get; set; } = "";

    [JsonPropertyName("metricType")]
    public string? MetricType { get; set; }

    [JsonPropertyName("metadata")]
    public Dictionary<string, string> Metadata { get; set; } = [];
}
