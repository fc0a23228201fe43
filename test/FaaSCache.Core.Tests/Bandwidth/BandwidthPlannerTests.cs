using FaaSCache.Bandwidth;
using Microsoft.Extensions.Time.Testing;

namespace FaaSCache.Core.Tests.Bandwidth;

/// <summary>§4's T_DR planner against cases computed by hand (the arithmetic is in each test's comment).</summary>
[Trait("Category", "Unit")]
public sealed class BandwidthPlannerTests
{
    private const double MB = 1e6;

    [Fact]
    public void An_800_MB_object_over_90_MB_per_s_links_is_split_over_every_running_instance_up_to_the_limit()
    {
        // BW_BS = 90 MB/s, BW_Inst = 1 GB/s, no latencies, 6 running: the requester and each helper take S/N, and each
        // helper's range streams on at min(BW_BS, BW_Inst / helpers) = 90 MB/s, so T(N) = 800 / (90 N):
        // 8.889, 4.444, 2.963, 2.222, 1.778, 1.481 s: the fastest is N = 6.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 6, maxInstances: 6, profile);

        Assert.Equal(6, plan.Instances);
        Assert.Equal([8.889, 4.444, 2.963, 2.222, 1.778, 1.481], [.. plan.Evaluated.Select(t => Math.Round(t, 3))]);
        Assert.Contains("the fastest up to the limit of 6", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Among_running_instances_the_plan_takes_the_fastest_not_the_fewest_within_ten_percent()
    {
        // As above with 16 running: past 12 instances the helpers share the requester's 1 GB/s inbound link
        // (T(13) = (800/13) / (1000/12) = 0.738 s, the fastest; T(14) = 0.743 s). T(11) = 800 / 990 = 0.808 s is within
        // 10% of it, but all 16 run already and using one costs nothing: N = 13.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 16, maxInstances: 16, profile);

        Assert.Equal(13, plan.Instances);
        Assert.Equal(0.738, plan.PredictedSeconds, 3);
        Assert.Contains("the fastest up to the limit of 16", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void The_ten_percent_slack_spares_only_instances_that_must_start()
    {
        // 800 MB, BW_BS = 90 MB/s, BW_Inst = 1 GB/s, T_Load = 1 s, limit 16. With 1 running every helper must start:
        // the requester keeps the 90 MB it reads in T_Load and N instances split the other 709.8 MB, so
        // T(10) = (90.18 + 70.98) / 90 = 1.791 s (the requester's part; each helper's 70.98 MB ends at 1.789 s),
        // T(12) = 1.659 s (the fastest), T(9) = 1.878 s: N = 10, the fewest within 10%.
        // With 4 running: T(4) = 800 / 360 = 2.222 s; a helper to start splits only what the requester has not begun (its
        // 200 MB share less the 90 MB it reads in T_Load), so the running helpers' 200 MB at 90 MB/s still take 2.222 s.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, TimeSpan.FromSeconds(1));

        BandwidthPlan cold = BandwidthPlanner.Plan((long)(800 * MB), running: 1, maxInstances: 16, profile);
        BandwidthPlan four = BandwidthPlanner.Plan((long)(800 * MB), running: 4, maxInstances: 16, profile);

        Assert.Equal(10, cold.Instances);
        Assert.Equal(1.791, cold.PredictedSeconds, 3);
        Assert.Contains("fewest within 10% of the fastest", cold.Reason, StringComparison.Ordinal);
        Assert.Equal(4, four.Instances);
        Assert.Equal(2.222, four.PredictedSeconds, 3);
        Assert.Contains("the fastest up to the limit of 16", four.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Helpers_that_must_start_join_after_T_Load_while_the_requester_keeps_reading()
    {
        // 800 MB, BW_BS = 90 MB/s, BW_Inst = 1 GB/s, T_Load = 1 s, 1 running, N = 2: by the time the helper joins the
        // requester is reading its 86th MiB, so it keeps 86 MiB (90.18 MB) and half of the rest (354.9 MB):
        // 445.1 / 90 = 4.945 s; the helper streams 354.9 MB at 90 MB/s after 1 s: 4.943 s. T(2) = 4.945 s, where the
        // paper's formula (T_Load first, then both links one after the other) says 5.844 s.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, TimeSpan.FromSeconds(1));

        Assert.Equal(4.945, BandwidthPlanner.Predict(2, (long)(800 * MB), running: 1, profile), 3);
        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 1, maxInstances: 6, profile);
        Assert.Equal([8.889, 4.945, 3.631, 2.974, 2.579, 2.316], [.. plan.Evaluated.Select(t => Math.Round(t, 3))]);
        Assert.Equal(6, plan.Instances);
    }

    [Fact]
    public void Starting_instances_is_worth_less_than_using_running_ones()
    {
        // 800 MB as above with T_Load = 1 s, limit 6: with 6 running T(6) = 1.481 s; with 1 running the five helpers must
        // start first and T(6) = 2.316 s.
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, TimeSpan.FromSeconds(1));

        double running = BandwidthPlanner.Plan((long)(800 * MB), running: 6, maxInstances: 6, profile).PredictedSeconds;
        double cold = BandwidthPlanner.Plan((long)(800 * MB), running: 1, maxInstances: 6, profile).PredictedSeconds;

        Assert.Equal(1.481, running, 3);
        Assert.Equal(2.316, cold, 3);
    }

    [Fact]
    public void A_400_KB_object_stays_with_one_instance_because_the_cachelet_never_splits_under_2_MiB()
    {
        // 400 KB, first byte 20 ms from storage and 2 ms from a peer, BW_BS = 90 MB/s: T(N) = 0.020 + 0.00444 for every N.
        var profile = new TransferProfile(90 * MB, TimeSpan.FromMilliseconds(20), 1000 * MB, TimeSpan.FromMilliseconds(2), TimeSpan.FromSeconds(1));

        BandwidthPlan plan = BandwidthPlanner.Plan(400_000, running: 4, maxInstances: 16, profile);

        Assert.Equal(1, plan.Instances);
        Assert.Equal(0.02444, plan.PredictedSeconds, 5);
        Assert.False(ScaledLoadModel.Splits(400_000));
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
    [Fact]
    public void A_short_slow_probe_hardly_moves_a_rate_that_a_long_load_has_just_measured_and_a_sustained_slower_link_does()
    {
        // Issue 36's cold rig: one instance read 800 MB at 85 MB/s (9.4 s); an 8 MiB probe then ran while storage was busy
        // (45 MB/s). As a sample among equals it took BW_BS to 73 MB/s, and the one-instance estimate for the next 800 MB
        // (11 s) made a split held to the learned 82 MB/s look 12% faster than the instance that had just done 9.4 s.
        var profiler = new TransferProfiler();
        profiler.RecordStorage(800_000_000, TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(800 / 85.0));
        profiler.RecordStorage(TransferProbe.ProbeBytes, TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(TransferProbe.ProbeBytes / 45e6));
        profiler.RecordStorage(TransferProbe.ProbeBytes, TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(TransferProbe.ProbeBytes / 45e6));
        Assert.InRange(profiler.Current.StorageBytesPerSecond!.Value, 78e6, 85e6);

        // Twenty seconds of loads at 50 MB/s: the link is slower now, and the rate says so.
        for (int i = 0; i < 10; i++)
        {
            profiler.RecordStorage(100_000_000, TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(2));
        }

        Assert.InRange(profiler.Current.StorageBytesPerSecond!.Value, 50e6, 52e6);
    }

    [Fact]
    public void A_slow_first_peer_probe_taken_during_start_up_gives_way_to_the_probes_after_it()
    {
        // BW_Inst comes from probes of one size only: each weighs the same (weighed by time, the slow start-up probe held
        // BW_Inst at a third of the link through a whole benchmark run), and the mean divides by the weight seen.
        var profiler = new TransferProfiler();
        profiler.RecordPeer(TransferProbe.ProbeBytes, TimeSpan.FromMilliseconds(50), TimeSpan.FromSeconds(TransferProbe.ProbeBytes / 100e6));
        for (int i = 0; i < 3; i++)
        {
            profiler.RecordPeer(TransferProbe.ProbeBytes, TimeSpan.FromMilliseconds(5), TimeSpan.FromSeconds(TransferProbe.ProbeBytes / 340e6));
        }

        Assert.InRange(profiler.Current.PeerBytesPerSecond!.Value, 300e6, 340e6);
    }

    [Fact]
    public void A_split_that_saved_less_than_half_of_its_predicted_saving_did_not_pay_even_within_a_quarter_of_its_prediction()
    {
        // The cold rig's 800 MB read in the full run at 9af9dd7: 8.09 s predicted over 2 instances against 9.41 s alone, it
        // took 9.69 s by the benchmark's clock, and no more than the 9.41 s by the host's (the split was not counted as
        // slower than one instance, and was within 25% of its prediction), so the next read was split again. Here 9.3 s:
        // it saved 0.1 s of the 1.32 s it promised, so the next 800 MB read stays whole.
        var profiler = new TransferProfiler();
        profiler.RecordStorage(800_000_000, TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(800 / 85.0));
        profiler.RecordPeer(90_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(2.7));
        profiler.RecordScaledLoad(800_000_000, instances: 2, TimeSpan.FromSeconds(9.3), predictedSeconds: 8.09, singleSeconds: 9.41);

        Assert.Contains("less than half the saving predicted", profiler.Current.InboundSource, StringComparison.Ordinal);
        Assert.Equal(1, BandwidthPlanner.Plan(800_000_000, running: 1, maxInstances: 16, profiler.Current).Instances);

        // A split that delivered most of its saving is no such measurement (the running rig's 400 MB: 1.40 s of 1.16 s predicted, 4.65 s alone).
        var running = new TransferProfiler();
        running.RecordScaledLoad(400_000_000, instances: 4, TimeSpan.FromSeconds(1.40), predictedSeconds: 1.16, singleSeconds: 4.65);
        Assert.Null(running.Current.InboundBytesPerSecond);
        Assert.Null(running.InboundSuspicion);
    }

    [Fact]
    public void A_measured_inbound_limit_holds_every_split_load_to_it_and_the_plan_takes_one_more_than_the_fewest_that_reach_it()
    {
        // 800 MB, BW_BS = 90 MB/s, BW_Inst = 1 GB/s, 6 running, inbound measured at 200 MB/s: no split is faster than
        // 800 / 200 = 4.0 s, so T = 8.889, 4.444, then 4.0 for N = 3..6 (2.963 s and less without the limit). N = 3 is
        // the fewest that reach the limit; a load held to it could never show the link carries more, so N = 4 (as fast
        // by the model; a faster load raises the limit).
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null, InboundBytesPerSecond: 200 * MB);

        BandwidthPlan plan = BandwidthPlanner.Plan((long)(800 * MB), running: 6, maxInstances: 6, profile);

        Assert.Equal([8.889, 4.444, 4.0, 4.0, 4.0, 4.0], [.. plan.Evaluated.Select(t => Math.Round(t, 3))]);
        Assert.Equal(4, plan.Instances);
        Assert.Contains("held to the 200 MB/s", plan.Reason, StringComparison.Ordinal);
        Assert.Contains("one more instance (4) tests whether it still holds", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_limit_that_does_not_bind_leaves_the_plan_alone_and_one_that_binds_at_the_limit_of_instances_takes_them_all()
    {
        // 200 MB with BW_BS = 90 MB/s and 2 running: N = 2 takes 1.111 s, above the limit's floor of 200 / 200 = 1.0 s, so
        // the limit does not bind and N = 2 stays (the fastest).
        var profile = new TransferProfile(90 * MB, null, 1000 * MB, null, null, InboundBytesPerSecond: 200 * MB);
        BandwidthPlan two = BandwidthPlanner.Plan((long)(200 * MB), running: 2, maxInstances: 2, profile);
        Assert.Equal(2, two.Instances);
        Assert.DoesNotContain("tests whether", two.Reason, StringComparison.Ordinal);

        // Bound at N = 3 with 3 running and a limit of 3: no fourth to test with, N = 3.
        BandwidthPlan three = BandwidthPlanner.Plan((long)(800 * MB), running: 3, maxInstances: 3, profile);
        Assert.Equal(3, three.Instances);
        Assert.DoesNotContain("tests whether", three.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_planned_split_that_fell_well_short_of_its_prediction_makes_the_next_plan_keep_one_instance()
    {
        // The cold rig of `benchmarks/run bandwidth-scaling` (one 90 MB/s bucket for storage and peer traffic alike):
        // 400 MB planned over 2 instances at 2.9 s took 6.12 s, 65.4 MB/s into the requester. With that measured, a split
        // cannot beat 6.12 s and one instance alone takes 400 / 86 = 4.651 s.
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 28, 12, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);
        profiler.RecordStorage(86_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordPeer(90_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(2));
        Assert.Equal(2, BandwidthPlanner.Plan(400_000_000, running: 1, maxInstances: 2, profiler.Current).Instances);

        // Slower than one instance alone (4.651 s): the split did not pay at all, so one such load is enough.
        profiler.RecordScaledLoad(400_000_000, instances: 2, TimeSpan.FromSeconds(6.12), predictedSeconds: 2.9, singleSeconds: 4.651);

        Assert.Equal(65.36e6, profiler.Current.InboundBytesPerSecond!.Value, tolerance: 1e4);
        Assert.Contains("slower than one instance", profiler.Current.InboundSource, StringComparison.Ordinal);
        BandwidthPlan plan = BandwidthPlanner.Plan(400_000_000, running: 1, maxInstances: 2, profiler.Current);
        Assert.Equal(1, plan.Instances);
        Assert.Equal(4.651, plan.PredictedSeconds, 3);
        Assert.Equal(6.12, plan.Evaluated[1], 2);
    }

    [Fact]
    public void Where_a_limit_leaves_a_split_within_ten_percent_of_one_instance_no_instance_is_started_to_test_it()
    {
        // The cold rig's 800 MB reads in the full run at ae72e06: BW_BS sampled at 76.5 MB/s (one instance alone: 800 / 76.5
        // = 10.46 s), an inbound limit of 83 MB/s set by a 400 MB split that did not pay. Held to the limit a split takes
        // 800 / 83 = 9.64 s, within 10% of one instance: nothing is worth starting instances for, and the split that did
        // not pay is not made again (the run had tested the limit with N=3 and then split once more).
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 29, 18, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);
        profiler.RecordStorage(76_500_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordPeer(82_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(1.72));
        profiler.RecordScaledLoad(400_000_000, instances: 2, TimeSpan.FromSeconds(4.82), predictedSeconds: 3.36, singleSeconds: 4.67);

        BandwidthPlan plan = BandwidthPlanner.Plan(800_000_000, running: 1, maxInstances: 16, profiler.Current);

        Assert.Equal(1, plan.Instances);
        Assert.Contains("held to the 83 MB/s", plan.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_test_split_that_carries_no_more_than_the_limit_confirms_it_and_is_not_repeated_until_the_limit_is_forgotten()
    {
        // Three instances running and the same limit: the split is chosen (using running instances costs nothing), and
        // where the limit binds (N=2 and N=3 both 9.64 s) the plan takes one more than the fewest that reach it, to test it.
        // That split took 10.12 s (79 MB/s, no more than the limit): it confirms the limit, and the next plan does not test again.
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 29, 18, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);
        profiler.RecordStorage(76_500_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordPeer(82_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordInstanceLoad(TimeSpan.FromSeconds(1.72));
        profiler.RecordScaledLoad(400_000_000, instances: 2, TimeSpan.FromSeconds(4.82), predictedSeconds: 3.36, singleSeconds: 4.67);
        BandwidthPlan test = BandwidthPlanner.Plan(800_000_000, running: 3, maxInstances: 16, profiler.Current);
        Assert.Equal(3, test.Instances);
        Assert.Contains("tests whether it still holds", test.Reason, StringComparison.Ordinal);

        profiler.RecordScaledLoad(800_000_000, test.Instances, TimeSpan.FromSeconds(10.12), test.PredictedSeconds, test.SingleSeconds);

        Assert.True(profiler.Current.InboundConfirmed);
        BandwidthPlan next = BandwidthPlanner.Plan(800_000_000, running: 3, maxInstances: 16, profiler.Current);
        Assert.Equal(2, next.Instances);
        Assert.Contains("confirmed by a split since", next.Reason, StringComparison.Ordinal);

        // Ten minutes after the load that set it the limit is forgotten, confirmation and all: the planner splits again.
        time.Advance(TransferProfiler.InboundLifetime);
        Assert.False(profiler.Current.InboundConfirmed);
        Assert.Null(profiler.Current.InboundBytesPerSecond);
    }

    [Fact]
    public void A_split_within_a_quarter_of_its_prediction_measures_no_limit_and_a_slow_one_that_paid_is_only_a_suspicion()
    {
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 28, 12, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);

        // 1.40 s against 1.16 s predicted is 21% over: the model's error, not a limit. A forced N (no prediction) sets none.
        profiler.RecordScaledLoad(400_000_000, instances: 4, TimeSpan.FromSeconds(1.40), predictedSeconds: 1.16, singleSeconds: 4.65);
        profiler.RecordScaledLoad(400_000_000, instances: 4, TimeSpan.FromSeconds(4.0), predictedSeconds: 0);
        Assert.Null(profiler.Current.InboundBytesPerSecond);

        // 1.60 s is 38% over, but far faster than one instance (4.65 s): one such load is a suspicion, not a limit.
        profiler.RecordScaledLoad(400_000_000, instances: 4, TimeSpan.FromSeconds(1.60), predictedSeconds: 1.16, singleSeconds: 4.65);
        Assert.Null(profiler.Current.InboundBytesPerSecond);
        Assert.Contains("400 MB over 4 instances took 1.60 s", profiler.InboundSuspicion, StringComparison.Ordinal);

        // A load by one instance (no helper joined) says nothing about the shared link.
        profiler.RecordScaledLoad(400_000_000, instances: 1, TimeSpan.FromSeconds(9), predictedSeconds: 1.16, singleSeconds: 4.65);
        Assert.NotNull(profiler.InboundSuspicion);
    }

    [Fact]
    public void One_slow_split_does_not_change_the_next_plan_when_the_loads_after_it_are_fast_and_a_repeatedly_slow_link_does()
    {
        // The running rig of `benchmarks/run bandwidth-scaling`: 86 MB/s from storage, 90 MB/s between instances, four
        // running. The plan for 400 MB is N=4 (1.16 s predicted).
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 29, 12, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);
        profiler.RecordStorage(86_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        profiler.RecordPeer(360_000_000, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        BandwidthPlan first = BandwidthPlanner.Plan(400_000_000, running: 4, maxInstances: 4, profiler.Current);
        Assert.Equal(4, first.Instances);

        // One outlier (a first use of the peers' connections, a busy moment): 2.44 s. The plan does not move...
        profiler.RecordScaledLoad(400_000_000, first.Instances, TimeSpan.FromSeconds(2.44), first.PredictedSeconds, first.SingleSeconds);
        Assert.Equal((first.Instances, first.PredictedSeconds), Summary(BandwidthPlanner.Plan(400_000_000, running: 4, maxInstances: 4, profiler.Current)));
        // ...and the fast loads after it clear the suspicion: a later slow one starts afresh.
        profiler.RecordScaledLoad(400_000_000, first.Instances, TimeSpan.FromSeconds(1.2), first.PredictedSeconds, first.SingleSeconds);
        Assert.Null(profiler.InboundSuspicion);
        time.Advance(TimeSpan.FromMinutes(1));
        profiler.RecordScaledLoad(400_000_000, first.Instances, TimeSpan.FromSeconds(2.5), first.PredictedSeconds, first.SingleSeconds);
        Assert.Equal((first.Instances, first.PredictedSeconds), Summary(BandwidthPlanner.Plan(400_000_000, running: 4, maxInstances: 4, profiler.Current)));

        // A link that is slow again and again: the second slow load confirms it, at the faster of the two (2.40 s: 167 MB/s).
        time.Advance(TimeSpan.FromMinutes(1));
        profiler.RecordScaledLoad(400_000_000, first.Instances, TimeSpan.FromSeconds(2.40), first.PredictedSeconds, first.SingleSeconds);
        Assert.Equal(166.67e6, profiler.Current.InboundBytesPerSecond!.Value, tolerance: 1e4);
        Assert.Contains("confirming", profiler.Current.InboundSource, StringComparison.Ordinal);
        BandwidthPlan held = BandwidthPlanner.Plan(400_000_000, running: 4, maxInstances: 4, profiler.Current);
        Assert.True(held.Instances < first.Instances, held.Reason);
        Assert.Contains("MB/s measured into this instance", held.Reason, StringComparison.Ordinal);

        // A load that carries more than the limit disproves it at once (here a forced N=4 in 1.0 s, 400 MB/s).
        profiler.RecordScaledLoad(400_000_000, instances: 4, TimeSpan.FromSeconds(1.0), predictedSeconds: 0);
        Assert.Null(profiler.Current.InboundBytesPerSecond);
        Assert.Equal((first.Instances, first.PredictedSeconds), Summary(BandwidthPlanner.Plan(400_000_000, running: 4, maxInstances: 4, profiler.Current)));
    }

    private static (int, double) Summary(BandwidthPlan plan) => (plan.Instances, plan.PredictedSeconds);

    [Fact]
    public void A_measured_inbound_limit_is_forgotten_ten_minutes_after_the_load_that_measured_it()
    {
        var time = new FakeTimeProvider(new DateTimeOffset(2026, 11, 28, 12, 0, 0, TimeSpan.Zero));
        var profiler = new TransferProfiler(time);
        profiler.RecordScaledLoad(400_000_000, instances: 2, TimeSpan.FromSeconds(6.12), predictedSeconds: 2.9, singleSeconds: 4.651);

        time.Advance(TransferProfiler.InboundLifetime - TimeSpan.FromSeconds(1));
        Assert.NotNull(profiler.Current.InboundBytesPerSecond);
        time.Advance(TimeSpan.FromSeconds(1));
        Assert.Null(profiler.Current.InboundBytesPerSecond);

        // Once forgotten, a new split that does not pay measures afresh (not averaged with the old value).
        profiler.RecordScaledLoad(400_000_000, instances: 2, TimeSpan.FromSeconds(5.0), predictedSeconds: 2.9, singleSeconds: 4.651);
        Assert.Equal(80e6, profiler.Current.InboundBytesPerSecond!.Value, 0);
    }
}
