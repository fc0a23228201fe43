using FaaSCache.Bandwidth;

namespace FaaSCache.Core.Tests.Scaling;

/// <summary>§4's T_DR planner against cases computed by hand (the arithmetic is in each test's comment).</summary>
[Trait("Category", "Unit")]
public sealed class BandwidthPlannerTests
{
    private const double MB = 1e6;

    [Fact]
    public void An_800_MB_object_over_90_MB_per_s_links_is_split_over_every_running_instance_up_to_the_limit()
    {
        // BW_BS = 90 MB/s, BW_Inst = 1 GB/s, no latencies, 6 running:
        // T(1) = 800/90 = 8.889; T(2) = 400/90 + 400/1000 = 4.844; T(3) = 2.963 + 0.533 = 3.496;
        // T(4) = 2.222 + 0.600 = 2.822; T(5) = 1.778 + 0.640 = 2.418; T(6) = 1.481 + 0.667 = 2.148.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 6, maxInstances: 6, profile);

        Assert.Equal(6, plan.Instances);
        double[] expected = [8.889, 4.844, 3.496, 2.822, 2.418, 2.148];
        Assert.Equal(expected.Length, plan.Evaluated.Count);
        for (int i = 0; i < expected.Length; i++)
        {
            Assert.Equal(expected[i], plan.Evaluated[i], 3);
        }

        Assert.Contains("limit of 6", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void The_iteration_stops_at_the_first_step_that_gains_less_than_ten_percent_and_does_not_take_it()
    {
        // As above with room for 10: T(7) = 114.29/90 + 685.71/1000 = 1.270 + 0.686 = 1.956, a gain of 8.9% over
        // T(6) = 2.148: not worth a seventh link, so N = 6.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 10, maxInstances: 10, profile);

        Assert.Equal(6, plan.Instances);
        Assert.Equal(7, plan.Evaluated.Count);
        Assert.Equal(1.956, plan.Evaluated[6], 3);
        Assert.Contains("less than 10", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Starting_an_instance_is_paid_only_for_instances_beyond_the_running_ones()
    {
        // 400 MB, BW_BS = 90 MB/s, BW_Inst = 400 MB/s, T_Load = 2 s, 2 running:
        // T(1) = 4.444; T(2) = 2.222 + 200/400 = 2.722 (running: no T_Load);
        // T(3) = 1.481 + 266.67/400 + 2 = 4.148 > T(2): rises, N = 2.
        var profile = new TransferProfile(90 * MB, null, 400 * MB, null, TimeSpan.FromSeconds(2));

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(400 * MB), running: 2, maxInstances: 6, profile);

        Assert.Equal(2, plan.Instances);
        Assert.Equal([4.444, 2.722, 4.148], [.. plan.Evaluated.Select(t => Math.Round(t, 3))]);
        Assert.Contains("rises at N=3", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_cold_start_is_worth_it_when_the_object_is_large_enough()
    {
        // 800 MB, BW_BS = 90 MB/s, BW_Inst = 1 GB/s, T_Load = 1 s, 1 running:
        // T(1) = 8.889; T(2) = 4.444 + 0.4 + 1 = 5.844; T(3) = 2.963 + 0.533 + 1 = 4.496; T(4) = 2.222 + 0.6 + 1 = 3.822;
        // T(5) = 1.778 + 0.64 + 1 = 3.418 (10.6%); T(6) = 1.481 + 0.667 + 1 = 3.148 (7.9%): N = 5.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, TimeSpan.FromSeconds(1));

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 1, maxInstances: 16, profile);

        Assert.Equal(5, plan.Instances);
        Assert.Equal(3.418, plan.PredictedSeconds, 3);
    }

    [Fact]
    public void A_400_KB_object_stays_with_one_instance_because_latency_dominates()
    {
        // 400 KB, first byte 20 ms from storage and 2 ms from a peer, BW_BS = 90 MB/s, BW_Inst = 1 GB/s, 4 running:
        // T(1) = 0.020 + 0.00444 = 0.02444; T(2) = 0.020 + 0.00222 + 0.002 + 0.0002 = 0.02442: a 0.1% gain, N = 1.
        var profile = new TransferProfile(90 * MB, TimeSpan.FromMilliseconds(20), 1000 * MB, TimeSpan.FromMilliseconds(2), TimeSpan.FromSeconds(1));

        BandwidthPlan plan = BandwidthPlanner.Plan(400_000, running: 4, maxInstances: 16, profile);

        Assert.Equal(1, plan.Instances);
        Assert.Equal(0.02444, plan.PredictedSeconds, 5);
    }

    [Fact]
    public void Without_measured_bandwidths_the_planner_does_not_scale()
    {
        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 4, maxInstances: 16, TransferProfile.Unmeasured);

        Assert.Equal(1, plan.Instances);
        Assert.Contains("not measured", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Without_a_measured_start_time_the_plan_stays_within_the_running_instances()
    {
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 3, maxInstances: 16, profile);

        Assert.Equal(3, plan.Instances);
        Assert.Contains("not measured yet", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void The_profiler_measures_bandwidth_only_from_samples_large_enough_to_mean_something()
    {
        var profiler = new TransferProfiler();
        profiler.RecordStorage(4096, TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(1));
        Assert.Null(profiler.Current.StorageBytesPerSecond);
        Assert.NotNull(profiler.Current.StorageLatency);

        profiler.RecordStorage(90_000_000, TimeSpan.FromMilliseconds(5), TimeSpan.FromSeconds(1));
        profiler.RecordPeer(100_000_000, TimeSpan.FromMilliseconds(1), TimeSpan.FromSeconds(0.1));
        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(3));

        TransferProfile p = profiler.Current;
        Assert.Equal(90e6, p.StorageBytesPerSecond!.Value, 0);
        Assert.Equal(1e9, p.PeerBytesPerSecond!.Value, 0);
        Assert.Equal(TimeSpan.FromSeconds(3), p.InstanceLoad);
        Assert.True(p.HasBandwidths);
    }
}
