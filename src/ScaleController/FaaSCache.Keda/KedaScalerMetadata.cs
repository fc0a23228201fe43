using System.Globalization;
using FaaSCache.Keda.ExternalScaler;
using Grpc.Core;

namespace FaaSCache.Keda;

/// <summary>
/// What a ScaledObject's trigger <c>metadata</c> block (KEDA's <c>scalerMetadata</c>) asks of this scaler: which app, and
/// how many of the controller's desired instances one pod stands for. Keys KEDA itself uses (scalerAddress, TLS) are ignored.
/// </summary>
public sealed record KedaScalerMetadata
{
    /// <summary>The metadata key naming the app (required).</summary>
    public const string AppKey = "app";

    /// <summary>The metadata key of the metric's target value: desired instances per pod (optional, default 1).</summary>
    public const string TargetValueKey = "targetValue";

    /// <summary>The target value when the metadata names none: one pod per desired instance.</summary>
    public const double DefaultTargetValue = 1;

    /// <summary>Gets the app whose decisions are asked for.</summary>
    public required string App { get; init; }

    /// <summary>Gets the HPA's target value for the metric (> 0): the HPA wants ceil(desired instances / target) pods.</summary>
    public required double TargetValue { get; init; }

    /// <summary>Reads the metadata of a KEDA request; a missing or bad value is an <see cref="RpcException"/> (InvalidArgument) naming the key, the value and what is allowed.</summary>
    public static KedaScalerMetadata Parse(ScaledObjectRef scaledObject)
    {
        ArgumentNullException.ThrowIfNull(scaledObject);
        string where = $"ScaledObject '{scaledObject.Namespace}/{scaledObject.Name}'";
        if (!scaledObject.ScalerMetadata.TryGetValue(AppKey, out string? app) || string.IsNullOrWhiteSpace(app))
        {
            throw Invalid($"{where}: trigger metadata '{AppKey}' is missing; set it to the name of the app the scale controller scales");
        }

        double target = DefaultTargetValue;
        if (scaledObject.ScalerMetadata.TryGetValue(TargetValueKey, out string? text))
        {
            if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out target) || !double.IsFinite(target) || target <= 0)
            {
                throw Invalid($"{where}: trigger metadata '{TargetValueKey}' = '{text}' is not allowed; it must be a number > 0 (desired instances per pod, default 1)");
            }
        }

        return new KedaScalerMetadata { App = app.Trim(), TargetValue = target };
    }

    private static RpcException Invalid(string message) => new(new Status(StatusCode.InvalidArgument, message));
}
