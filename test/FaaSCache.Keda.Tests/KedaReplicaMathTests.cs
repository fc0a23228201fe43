namespace FaaSCache.Keda.Tests;

/// <summary>KEDA's activation and the HPA's AverageValue rule against hand-computed cases.</summary>
[Trait("Category", "Unit")]
public sealed class KedaReplicaMathTests
{
    private static readonly KedaReplicaLimits OneToTen = new(minReplicaCount: 1, maxReplicaCount: 10, idleReplicaCount: 0);

    [Theory]
    [InlineData(35, 10, 2, 4)] // ratio 1.75: ceil(35/10)
    [InlineData(21, 10, 2, 2)] // ratio 1.05, within 10%: stays
    [InlineData(23, 10, 2, 3)] // ratio 1.15: ceil(2.3)
    [InlineData(5, 10, 4, 1)] // ratio 0.125: ceil(0.5) = 1
    [InlineData(0, 1, 3, 1)] // nothing wanted: the HPA's floor is max(1, min)
    [InlineData(500, 1, 3, 10)] // clamped to max
    [InlineData(9, 1, 10, 10)] // 9 wanted with 10 running: ratio 0.9, within 10%, so the HPA keeps 10
    public void The_hpa_wants_ceil_of_total_over_target_unless_within_tolerance(double total, double target, int current, int expected) =>
        Assert.Equal(expected, KedaReplicaMath.HpaReplicas(total, target, current, OneToTen));

    [Fact]
    public void Activation_from_zero_goes_to_the_minimum_before_the_hpa_decides()
    {
        var limits = new KedaReplicaLimits(minReplicaCount: 2, maxReplicaCount: 10, idleReplicaCount: 0);

        Assert.Equal(2, KedaReplicaMath.NextReplicas(70, 10, isActive: true, currentReplicas: 0, limits));
        Assert.Equal(7, KedaReplicaMath.NextReplicas(70, 10, isActive: true, currentReplicas: 2, limits));
        Assert.Equal(7, KedaReplicaMath.SettledReplicas(70, 10, isActive: true, currentReplicas: 0, limits));
    }

    [Fact]
    public void Inactive_goes_to_idle_when_set_and_to_zero_only_when_the_minimum_allows()
    {
        Assert.Equal(0, KedaReplicaMath.SettledReplicas(30, 10, isActive: false, currentReplicas: 3, OneToTen));
        Assert.Equal(0, KedaReplicaMath.SettledReplicas(0, 1, isActive: false, currentReplicas: 3, new KedaReplicaLimits(0, 10)));
        Assert.Equal(1, KedaReplicaMath.SettledReplicas(0, 1, isActive: false, currentReplicas: 3, new KedaReplicaLimits(1, 10)));
        Assert.Equal(1, KedaReplicaMath.SettledReplicas(0, 1, isActive: false, currentReplicas: 0, new KedaReplicaLimits(1, 10)));
    }

    [Theory]
    [InlineData(-1, 2, null, "minReplicaCount")]
    [InlineData(2, 1, null, "maxReplicaCount")]
    [InlineData(0, 1, 0, "idleReplicaCount")]
    [InlineData(1, 2, 1, "idleReplicaCount")]
    public void Bounds_keda_would_refuse_are_refused_naming_the_field(int min, int max, int? idle, string field)
    {
        ArgumentOutOfRangeException refused = Assert.Throws<ArgumentOutOfRangeException>(() => new KedaReplicaLimits(min, max, idle));

        Assert.Equal(field, refused.ParamName);
    }

    [Theory]
    [InlineData("faascache-desired-instances", true)]
    [InlineData("s0-faascache-desired-instances", true)]
    [InlineData("s7-faascache-desired-instances", true)]
    [InlineData("s-faascache-desired-instances", false)]
    [InlineData("s0-s0-faascache-desired-instances", false)]
    [InlineData("faascache-desired-instances-x", false)]
    [InlineData("", false)]
    public void The_metric_name_matches_with_or_without_one_trigger_index_prefix(string requested, bool matches) =>
        Assert.Equal(matches, KedaMetric.Matches(requested));
}
