using FaaSCache.Bandwidth;
using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;
using static FaaSCache.Simulation.Tests.HandTrace;

namespace FaaSCache.Simulation.Tests;

/// <summary>The replay's instance count, decided by §4's voters over the trace's time.</summary>
[Trait("Category", "Unit")]
public sealed class AppScalerTests
{
    private static readonly SimulationOptions Voting = new();

    [Fact]
    public void A_busy_app_whose_working_set_thrashes_one_cache_scales_out_by_the_cache_size_votes()
    {
        // Three 1,000-byte objects in turn, 5 a second, through a 2,000-byte cache: each is evicted again and again.
        AppTrace trace = Build([.. Every(200, 600, i => ("k" + (i % 3).ToString(CultureInfo.InvariantCulture), 1_000))]);
        var policy = new PolicySet { CapacityBytes = 2_000 };

        AppResult voted = Run(trace, policy, Voting);
        AppResult withoutCacheSizeVoter = Run(trace, policy, Voting with { Scaling = new() { CacheSize = false } });

        Assert.True(voted.Instances > 1, $"peak {voted.Instances}");
        Assert.True(voted.ScaleOuts > 0);
        Assert.True(voted.RemoteHits + voted.RemoteMisses > 0, "keys are spread over the ring once instances join");
        Assert.Equal((1, 0), (withoutCacheSizeVoter.Instances, withoutCacheSizeVoter.ScaleOuts));
    }

    [Fact]
    public void Many_invocations_in_flight_scale_out_by_the_compute_votes()
    {
        // 20 invocations start within a second and each access takes 5 s: 20 in flight against a target of 8. The trace
        // ends at 3 s, after the first poll.
        AppTrace trace = Build([.. Every(50, 20, i => ("k" + i.ToString(CultureInfo.InvariantCulture), 1_000)), Access(3_000, 100, "z", 1_000)]);
        var slow = new LatencyModel(Flat(5_000_000), Flat(5_000_000), Flat(5_000_000), Flat(5_000_000), Flat(5_000_000));

        AppResult r = AppSimulator.Run(trace, AppLayout.For(trace, Voting), new PolicySet { CapacityBytes = 1 << 20 }, slow, Voting);

        // The first poll (2 s) sees 20 in flight: the compute voter's target is ceil(20 / 8) = 3.
        Assert.Equal(3, r.Instances);
    }

    [Fact]
    public void An_app_that_goes_quiet_scales_back_in()
    {
        // Thrash for two minutes (scales out), then one access every 40 s for nine minutes: every vote is in.
        var busy = Every(200, 600, i => ("k" + (i % 3).ToString(CultureInfo.InvariantCulture), 1_000));
        var quiet = Enumerable.Range(1, 13).Select(i => Access((120_000 + (i * 40_000)), 10_000 + i, "q", 1_000));
        AppTrace trace = Build([.. busy, .. quiet]);

        AppResult r = Run(trace, new PolicySet { CapacityBytes = 2_000 }, Voting);

        Assert.True(r.Instances > 1);
        // Down to one: at least one scale-in per instance above one (the scale-in cool-down is 30 s, the quiet part 9 minutes).
        Assert.True(r.ScaleIns >= r.Instances - 1, $"peak {r.Instances}, {r.ScaleIns} scale-ins");
        Assert.True(r.MeanInstances < r.Instances);
    }

    [Fact]
    public void A_large_miss_asks_for_instances_at_once_and_they_join_after_T_Load()
    {
        var links = new TransferProfile(90e6, TimeSpan.FromMilliseconds(10), 750e6, TimeSpan.FromMilliseconds(1), TimeSpan.FromSeconds(3));
        AppTrace trace = Build(Access(0, 0, "model", 800_000_000), Access(2_000, 1, "x", 1_000), Access(4_000, 2, "y", 1_000));
        var options = Voting with { Transfer = links };

        AppResult joinedLate = Run(trace, new PolicySet { CapacityBytes = 1L << 30 }, options);
        AppResult tooEarly = Run(Build(Access(0, 0, "model", 800_000_000), Access(2_000, 1, "x", 1_000)), new PolicySet { CapacityBytes = 1L << 30 }, options);

        // T_DR is 8.9 s alone and 6.7 s with two instances started for it (T_Load 3 s): the planner asks for 3 at once.
        Assert.True(joinedLate.Instances > 1, $"peak {joinedLate.Instances}");
        Assert.Equal(1, joinedLate.ScaleOuts);
        // The trace ends at 2 s, before T_Load is over: the app never ran on more than one.
        Assert.Equal((1, 1), (tooEarly.Instances, tooEarly.ScaleOuts));
    }

    [Fact]
    public async Task The_replay_with_voters_is_deterministic()
    {
        // A day of three busy apps through 4 KB caches: hot keys are evicted again within a poll, so apps scale.
        var generator = new TraceGenerator(new TraceGeneratorOptions { Accesses = 300_000, Apps = 3, Days = 1, Seed = 4 });
        PolicySet[] policies = [new PolicySet { CapacityBytes = 4 << 10 }, new PolicySet { CapacityBytes = 4 << 10, Prewarm = true }];
        var options = Voting with { Transfer = new TransferProfile(90e6, TimeSpan.FromMilliseconds(10), 750e6, TimeSpan.FromMilliseconds(1), TimeSpan.FromSeconds(3)) };

        FleetResult a = await new FleetSimulator(policies, [Latency], options).RunAsync(AppGrouping.Group(generator.Generate()));
        FleetResult b = await new FleetSimulator(policies, [Latency], options).RunAsync(AppGrouping.Group(generator.Generate()));

        static IEnumerable<object> Fingerprint(FleetResult r) => r.Results.SelectMany(apps => apps.Select(x => (object)(x.AppName, x.Instances, x.MeanInstances, x.ScaleOuts, x.ScaleIns, x.LocalHits, x.RemoteHits, x.Evictions, x.CachedMicros)));
        Assert.Equal(Fingerprint(a), Fingerprint(b));
        Assert.Contains(a.Results.SelectMany(apps => apps), x => x.ScaleOuts > 0);
    }

    private static AppResult Run(AppTrace trace, PolicySet policy, SimulationOptions options)
        => AppSimulator.Run(trace, AppLayout.For(trace, options), policy, Latency, options);

    /// <summary><paramref name="count"/> one-access invocations, <paramref name="everyMs"/> apart, from time 0.</summary>
    private static IEnumerable<BlobAccess> Every(long everyMs, int count, Func<int, (string Key, long Size)> access)
        => Enumerable.Range(0, count).Select(i => Access(i * everyMs, i, access(i).Key, access(i).Size));

    private static BlobAccess Access(long ms, int invocation, string key, long size)
        => new(ms, "r", "u", App, "i" + invocation.ToString(CultureInfo.InvariantCulture), key, "BlockBlob", "e0", size, true, false);

    private static LatencyCurve Flat(double micros) => new([(1, micros)]);
}
