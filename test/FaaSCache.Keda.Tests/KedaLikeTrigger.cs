namespace FaaSCache.Keda.Tests;

/// <summary>
/// An <c>external</c> trigger as KEDA drives it (kedacore/keda pkg/scalers/external_scaler.go): the metric spec named
/// <c>s&lt;index&gt;-&lt;name&gt;</c> for the HPA, then GetMetrics with that prefix stripped, then IsActive; the float fields
/// when they are &gt; 0, else the deprecated integers.
/// </summary>
internal sealed class KedaLikeTrigger(ExternalScaler.ExternalScaler.ExternalScalerClient client, ScaledObjectRef scaledObject, int triggerIndex = 0)
{
    private string Prefix => $"s{triggerIndex}-";

    /// <summary>GetMetricSpec as KEDA reads it for the HPA: the prefixed metric name and the target value.</summary>
    public async Task<(string HpaMetricName, double Target)> GetMetricSpecAsync()
    {
        GetMetricSpecResponse response = await client.GetMetricSpecAsync(scaledObject);
        MetricSpec spec = Assert.Single(response.MetricSpecs);
        double target = spec.TargetSizeFloat > 0 ? spec.TargetSizeFloat : spec.TargetSize;
        return (Prefix + spec.MetricName, target);
    }

    /// <summary>GetMetrics for the HPA's metric name (prefix stripped, as KEDA does), then IsActive for activation.</summary>
    public async Task<(double Total, bool IsActive)> GetMetricsAndActivityAsync(string hpaMetricName)
    {
        Assert.StartsWith(Prefix, hpaMetricName, StringComparison.Ordinal);
        var request = new GetMetricsRequest { ScaledObjectRef = scaledObject, MetricName = hpaMetricName[Prefix.Length..] };
        GetMetricsResponse metrics = await client.GetMetricsAsync(request);
        double total = metrics.MetricValues.Sum(v => v.MetricValueFloat > 0 ? v.MetricValueFloat : v.MetricValue_);
        IsActiveResponse active = await client.IsActiveAsync(scaledObject);
        return (total, active.Result);
    }

    /// <summary>A ScaledObject reference as KEDA sends it: the trigger's metadata block in scalerMetadata.</summary>
    public static ScaledObjectRef Reference(string name, params (string Key, string Value)[] metadata)
    {
        var reference = new ScaledObjectRef { Name = name, Namespace = "faascache" };
        reference.ScalerMetadata.Add("scalerAddress", "faascache-controller.faascache.svc.cluster.local:8081");
        foreach ((string key, string value) in metadata)
        {
            reference.ScalerMetadata[key] = value;
        }

        return reference;
    }
}
