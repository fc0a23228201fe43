using System.Globalization;
using System.Threading.Channels;
using FaaSCache.Keda.ExternalScaler;
using Grpc.Core;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Keda;

/// <summary>
/// KEDA's external scaler over the scale controller's decisions (§4's votes, aggregated by the controller): one metric,
/// the desired instance count, whose target (trigger metadata <c>targetValue</c>, default 1) makes the HPA ask for
/// ceil(desired / target) pods; activity (0 &lt;-&gt; 1 pod) from <see cref="IScaleDecisions.IsActive"/>, polled or pushed.
/// </summary>
public sealed class KedaExternalScalerService : ExternalScaler.ExternalScaler.ExternalScalerBase
{
    private readonly IReadOnlyList<IScaleDecisions> _apps;
    private readonly ILogger<KedaExternalScalerService> _logger;

    /// <summary>Creates the service over every app the controller scales (one <see cref="IScaleDecisions"/> per app).</summary>
    public KedaExternalScalerService(IEnumerable<IScaleDecisions> apps, ILogger<KedaExternalScalerService> logger)
    {
        _apps = [.. apps];
        _logger = logger;
    }

    /// <inheritdoc/>
    public override Task<IsActiveResponse> IsActive(ScaledObjectRef request, ServerCallContext context)
    {
        IScaleDecisions decisions = Find(KedaScalerMetadata.Parse(request));
        bool active = decisions.IsActive;
        _logger.LogDebug("KEDA IsActive for {App}: {Active} ({Reason})", decisions.AppName, active, decisions.Reason);
        return Task.FromResult(new IsActiveResponse { Result = active });
    }

    /// <inheritdoc/>
    public override async Task StreamIsActive(ScaledObjectRef request, IServerStreamWriter<IsActiveResponse> responseStream, ServerCallContext context)
    {
        IScaleDecisions decisions = Find(KedaScalerMetadata.Parse(request));

        // A signal, not a queue: the writer always sends the value current when it writes, so a burst of changes
        // while a write is under way collapses into one message and none is lost.
        var changed = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true });
        void OnChanged(object? sender, EventArgs e) => changed.Writer.TryWrite(true);
        decisions.Changed += OnChanged;
        try
        {
            changed.Writer.TryWrite(true); // KEDA wants the current state at once, not only the next change
            await foreach (bool _ in changed.Reader.ReadAllAsync(context.CancellationToken))
            {
                bool active = decisions.IsActive;
                _logger.LogDebug("KEDA StreamIsActive for {App}: pushing {Active} ({Reason})", decisions.AppName, active, decisions.Reason);
                await responseStream.WriteAsync(new IsActiveResponse { Result = active }, context.CancellationToken);
            }
        }
        catch (OperationCanceledException) when (context.CancellationToken.IsCancellationRequested)
        {
            // KEDA closed the stream (ScaledObject deleted or KEDA restarted): the normal end of a push stream.
        }
        finally
        {
            decisions.Changed -= OnChanged;
        }
    }

    /// <inheritdoc/>
    public override Task<GetMetricSpecResponse> GetMetricSpec(ScaledObjectRef request, ServerCallContext context)
    {
        KedaScalerMetadata metadata = KedaScalerMetadata.Parse(request);
        Find(metadata);
        var spec = new MetricSpec
        {
            MetricName = KedaMetric.Name,
            TargetSizeFloat = metadata.TargetValue,
            // Older KEDA reads only the deprecated integer; it must not be 0 (KEDA would then see no target).
            TargetSize = Math.Max(1, (long)Math.Round(metadata.TargetValue, MidpointRounding.AwayFromZero)),
        };
        return Task.FromResult(new GetMetricSpecResponse { MetricSpecs = { spec } });
    }

    /// <inheritdoc/>
    public override Task<GetMetricsResponse> GetMetrics(GetMetricsRequest request, ServerCallContext context)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (request.ScaledObjectRef is null)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "GetMetrics: scaledObjectRef is missing"));
        }

        IScaleDecisions decisions = Find(KedaScalerMetadata.Parse(request.ScaledObjectRef));
        if (!KedaMetric.Matches(request.MetricName))
        {
            throw new RpcException(new Status(StatusCode.NotFound, $"GetMetrics: metric '{request.MetricName}' is not served; this scaler serves '{KedaMetric.Name}' (with or without KEDA's s<index>- prefix)"));
        }

        int desired = decisions.DesiredInstances;
        _logger.LogDebug("KEDA GetMetrics for {App}: {Desired} instances ({Reason})", decisions.AppName, desired, decisions.Reason);
        var value = new MetricValue { MetricName = KedaMetric.Name, MetricValueFloat = desired, MetricValue_ = desired };
        return Task.FromResult(new GetMetricsResponse { MetricValues = { value } });
    }

    private IScaleDecisions Find(KedaScalerMetadata metadata)
    {
        foreach (IScaleDecisions app in _apps)
        {
            if (string.Equals(app.AppName, metadata.App, StringComparison.OrdinalIgnoreCase))
            {
                return app;
            }
        }

        string known = _apps.Count == 0 ? "none" : string.Join(", ", _apps.Select(a => $"'{a.AppName}'"));
        throw new RpcException(new Status(StatusCode.NotFound, string.Create(CultureInfo.InvariantCulture, $"app '{metadata.App}' (trigger metadata '{KedaScalerMetadata.AppKey}') is not scaled by this controller; it scales: {known}")));
    }
}
