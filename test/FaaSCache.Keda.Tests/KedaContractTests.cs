using Grpc.Core;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// The KEDA face over real gRPC, called as KEDA calls an external scaler, with the replica count KEDA and its HPA
/// would reach; the numbers are KEDA's own end-to-end test of an external scaler (threshold 10: 10 -> 1, 20 -> 2, 0 -> 0).
/// </summary>
[Trait("Category", "Integration")]
public sealed class KedaContractTests
{
    // KEDA's e2e ScaledObject: idleReplicaCount 0, minReplicaCount 1, maxReplicaCount 2.
    private static readonly KedaReplicaLimits E2eLimits = new(minReplicaCount: 1, maxReplicaCount: 2, idleReplicaCount: 0);

    [Fact]
    public async Task Keda_e2e_cases_give_one_replica_at_10_two_at_20_and_none_at_0_with_threshold_10()
    {
        var decisions = new SettableScaleDecisions("thumbnail-node");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(decisions);
        var trigger = new KedaLikeTrigger(server.Client, KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node"), ("targetValue", "10")));

        (string hpaMetric, double target) = await trigger.GetMetricSpecAsync();
        Assert.Equal("s0-" + KedaMetric.Name, hpaMetric);
        Assert.Equal(10, target);

        int replicas = 0;
        (int Metric, bool Active, int Replicas)[] steps = [(10, true, 1), (20, true, 2), (0, false, 0)];
        foreach ((int metric, bool active, int expected) in steps)
        {
            decisions.Set(metric, active, $"test sets {metric}");
            (double total, bool isActive) = await trigger.GetMetricsAndActivityAsync(hpaMetric);
            Assert.Equal(metric, total);
            Assert.Equal(active, isActive);
            replicas = KedaReplicaMath.SettledReplicas(total, target, isActive, replicas, E2eLimits);
            Assert.Equal(expected, replicas);
        }
    }

    [Fact]
    public async Task With_the_default_target_the_hpa_asks_for_exactly_the_desired_instances()
    {
        var decisions = new SettableScaleDecisions("thumbnail-node");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(decisions);
        var trigger = new KedaLikeTrigger(server.Client, KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node")), triggerIndex: 3);
        var limits = new KedaReplicaLimits(minReplicaCount: 1, maxReplicaCount: 6, idleReplicaCount: 0);

        (string hpaMetric, double target) = await trigger.GetMetricSpecAsync();
        Assert.Equal(1, target);
        decisions.Set(4, true, "four wanted");
        (double total, bool active) = await trigger.GetMetricsAndActivityAsync(hpaMetric);

        Assert.Equal(4, KedaReplicaMath.SettledReplicas(total, target, active, currentReplicas: 0, limits));
    }

    [Fact]
    public async Task The_deprecated_integer_fields_carry_the_same_values_for_older_keda()
    {
        var decisions = new SettableScaleDecisions("thumbnail-node");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(decisions);
        ScaledObjectRef reference = KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node"), ("targetValue", "10"));
        decisions.Set(20, true, "twenty");

        MetricSpec spec = Assert.Single((await server.Client.GetMetricSpecAsync(reference)).MetricSpecs);
        MetricValue value = Assert.Single((await server.Client.GetMetricsAsync(new GetMetricsRequest { ScaledObjectRef = reference, MetricName = KedaMetric.Name })).MetricValues);

        Assert.Equal(10, spec.TargetSize);
        Assert.Equal(20, value.MetricValue_);
        Assert.Equal(KedaMetric.Name, value.MetricName);
    }

    [Fact]
    public async Task StreamIsActive_sends_the_current_state_at_once_and_pushes_each_change()
    {
        var decisions = new SettableScaleDecisions("thumbnail-node");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(decisions);

        // A guard against a hang only; no assertion depends on time.
        using var hang = new CancellationTokenSource(TimeSpan.FromMinutes(1));
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(hang.Token);
        using AsyncServerStreamingCall<IsActiveResponse> call = server.Client.StreamIsActive(
            KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node")), cancellationToken: stop.Token);
        IAsyncStreamReader<IsActiveResponse> stream = call.ResponseStream;

        Assert.True(await stream.MoveNext(hang.Token));
        Assert.False(stream.Current.Result);
        Assert.Equal(1, decisions.Subscribers);

        decisions.Set(1, true, "urgent vote: a large miss wants more instances now");
        Assert.True(await stream.MoveNext(hang.Token));
        Assert.True(stream.Current.Result);

        decisions.Set(0, false, "idle");
        Assert.True(await stream.MoveNext(hang.Token));
        Assert.False(stream.Current.Result);

        await stop.CancelAsync();
        RpcException ended = await Assert.ThrowsAsync<RpcException>(() => stream.MoveNext(hang.Token));
        Assert.Equal(StatusCode.Cancelled, ended.StatusCode);

        // The server side ends with the call: it stops listening to the decisions (no handler left behind).
        await decisions.AllUnsubscribed.WaitAsync(hang.Token);
        Assert.Equal(0, decisions.Subscribers);
    }

    [Fact]
    public async Task An_unknown_app_is_refused_with_NotFound_naming_it_on_every_call()
    {
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(new SettableScaleDecisions("thumbnail-node"));
        ScaledObjectRef reference = KedaLikeTrigger.Reference("other-host", ("app", "no-such-app"));

        List<Func<Task>> calls =
        [
            async () => await server.Client.IsActiveAsync(reference),
            async () => await server.Client.GetMetricSpecAsync(reference),
            async () => await server.Client.GetMetricsAsync(new GetMetricsRequest { ScaledObjectRef = reference, MetricName = KedaMetric.Name }),
            async () =>
            {
                using AsyncServerStreamingCall<IsActiveResponse> stream = server.Client.StreamIsActive(reference);
                await stream.ResponseStream.MoveNext(CancellationToken.None);
            },
        ];
        foreach (Func<Task> call in calls)
        {
            RpcException refused = await Assert.ThrowsAsync<RpcException>(call);
            Assert.Equal(StatusCode.NotFound, refused.StatusCode);
            Assert.Contains("'no-such-app'", refused.Status.Detail, StringComparison.Ordinal);
            Assert.Contains("'thumbnail-node'", refused.Status.Detail, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData("faascache-desired-instances")]
    [InlineData("s0-faascache-desired-instances")]
    [InlineData("s12-faascache-desired-instances")]
    public async Task GetMetrics_accepts_the_metric_name_with_or_without_kedas_prefix(string metricName)
    {
        var decisions = new SettableScaleDecisions("thumbnail-node");
        decisions.Set(3, true, "three");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(decisions);

        GetMetricsResponse response = await server.Client.GetMetricsAsync(new GetMetricsRequest
        {
            ScaledObjectRef = KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node")),
            MetricName = metricName,
        });

        Assert.Equal(3, Assert.Single(response.MetricValues).MetricValueFloat);
    }

    [Fact]
    public async Task GetMetrics_refuses_another_metric_name_naming_the_one_served()
    {
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(new SettableScaleDecisions("thumbnail-node"));

        RpcException refused = await Assert.ThrowsAsync<RpcException>(async () => await server.Client.GetMetricsAsync(new GetMetricsRequest
        {
            ScaledObjectRef = KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node")),
            MetricName = "s0-queue-length",
        }));

        Assert.Equal(StatusCode.NotFound, refused.StatusCode);
        Assert.Contains("'s0-queue-length'", refused.Status.Detail, StringComparison.Ordinal);
        Assert.Contains(KedaMetric.Name, refused.Status.Detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("-5")]
    [InlineData("ten")]
    [InlineData("NaN")]
    public async Task A_bad_targetValue_is_InvalidArgument_naming_the_key_and_the_value(string targetValue)
    {
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(new SettableScaleDecisions("thumbnail-node"));

        RpcException refused = await Assert.ThrowsAsync<RpcException>(async () =>
            await server.Client.GetMetricSpecAsync(KedaLikeTrigger.Reference("faascache-host", ("app", "thumbnail-node"), ("targetValue", targetValue))));

        Assert.Equal(StatusCode.InvalidArgument, refused.StatusCode);
        Assert.Contains($"'targetValue' = '{targetValue}'", refused.Status.Detail, StringComparison.Ordinal);
        Assert.Contains("> 0", refused.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_trigger_without_app_metadata_is_InvalidArgument_naming_the_key()
    {
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(new SettableScaleDecisions("thumbnail-node"));

        RpcException refused = await Assert.ThrowsAsync<RpcException>(async () =>
            await server.Client.IsActiveAsync(KedaLikeTrigger.Reference("faascache-host")));

        Assert.Equal(StatusCode.InvalidArgument, refused.StatusCode);
        Assert.Contains("'app'", refused.Status.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Each_app_gets_its_own_decisions_when_the_controller_scales_several()
    {
        var thumbnails = new SettableScaleDecisions("thumbnail-node");
        var amber = new SettableScaleDecisions("amber-alert");
        thumbnails.Set(2, true, "two");
        amber.Set(5, true, "five");
        await using KedaScalerServer server = await KedaScalerServer.StartAsync(thumbnails, amber);

        GetMetricsResponse response = await server.Client.GetMetricsAsync(new GetMetricsRequest
        {
            ScaledObjectRef = KedaLikeTrigger.Reference("amber", ("app", "AMBER-ALERT")),
            MetricName = KedaMetric.Name,
        });

        Assert.Equal(5, Assert.Single(response.MetricValues).MetricValueFloat);
    }
}
