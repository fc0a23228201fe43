using FaaSCache.Options;
using FaaSCache.Ownership;
using FaaSCache.Simulation.Engine;
using static FaaSCache.Simulation.Tests.HandTrace;

namespace FaaSCache.Simulation.Tests;

[Trait("Category", "Unit")]
public sealed class AppSimulatorTests
{
    private static readonly SimulationOptions Options = new() { UnloadAfterIdle = TimeSpan.FromMinutes(10) };

    private static AppResult Run(AppTrace trace, PolicySet policy, int instances = 1)
        => AppSimulator.Run(trace, AppLayout.For(trace, instances), policy, Latency, Options);

    [Fact]
    public void One_instance_misses_once_then_hits_and_costs_add_up()
    {
        AppTrace trace = Build(Read(0, 0, "a"), Read(1, 1, "a"), Read(2, 2, "b"), Read(3, 3, "a"));

        AppResult r = Run(trace, new PolicySet { CapacityBytes = 1 << 20 });

        Assert.Equal((4, 2, 2, 0, 0), (r.Reads, r.LocalHits, r.LocalMisses, r.RemoteHits, r.RemoteMisses));
        Assert.Equal(40, r.BaselineMicros);
        Assert.Equal(10 + 1 + 10 + 1, r.CachedMicros);
        Assert.Equal(45, r.ImprovementPct);
    }

    [Fact]
    public void One_replay_is_costed_under_every_latency_model()
    {
        AppTrace trace = Build(Read(0, 0, "a"), Read(1, 1, "a"));
        var slowHits = new LatencyModel(new([(1, 8)]), new([(1, 10)]), new([(1, 9)]), new([(1, 20)]), new([(1, 10)]));

        AppResult r = AppSimulator.Run(trace, AppLayout.For(trace, 1), new PolicySet { CapacityBytes = 1 << 20 }, [Latency, slowHits], Options);

        Assert.Equal([10 + 1, 10 + 8], r.CachedMicrosByModel);
        Assert.Equal([20, 20], r.BaselineMicrosByModel);
        Assert.Equal((45, 10), (r.ImprovementPctFor(0), r.ImprovementPctFor(1)));
    }

    [Fact]
    public void LRU_evicts_the_least_recently_used_when_full()
    {
        // Room for two 1,000-byte objects: a, b, c evicts a; reading a again misses and evicts b.
        AppTrace trace = Build(Read(0, 0, "a"), Read(1, 1, "b"), Read(2, 2, "c"), Read(3, 3, "a"), Read(4, 4, "c"), Read(5, 5, "b"));

        AppResult r = Run(trace, new PolicySet { CapacityBytes = 2_000 });

        Assert.Equal((1, 5, 3), (r.LocalHits, r.LocalMisses, r.Evictions));
    }

    [Fact]
    public void The_size_policy_evicts_large_objects_first()
    {
        // a is large (5,000 > threshold 2,000), b and c small: c needs room and the size policy drops a, not b.
        AppTrace trace = Build(Read(0, 0, "b", 1_000), Read(1, 1, "a", 5_000), Read(2, 2, "c", 1_000), Read(3, 3, "b", 1_000));
        var size = new PolicySet { CapacityBytes = 6_500, Eviction = new EvictionOptions { Policy = EvictionPolicy.Size, SizeThresholdBytes = 2_000 } };
        var lru = size with { Eviction = new EvictionOptions { Policy = EvictionPolicy.Lru } };

        Assert.Equal(1, Run(trace, size).LocalHits);
        Assert.Equal(0, Run(trace, lru).LocalHits);
    }

    [Fact]
    public void An_object_bigger_than_the_cache_goes_to_storage()
    {
        AppTrace trace = Build(Read(0, 0, "big", 10_000), Read(1, 1, "big", 10_000));

        AppResult r = Run(trace, new PolicySet { CapacityBytes = 5_000 });

        Assert.Equal((2, 0, 0), (r.Uncacheable, r.LocalHits, r.LocalMisses));
        Assert.Equal(0, r.ImprovementPct);
    }

    [Fact]
    public void TTL_expiry_turns_a_later_read_into_a_miss()
    {
        AppTrace trace = Build(Read(0, 0, "a"), Read(3, 1, "a"), Read(6, 2, "a"));
        var ttl = new PolicySet { CapacityBytes = 1 << 20, Eviction = new EvictionOptions { Ttl = TimeSpan.FromMinutes(4) } };

        AppResult r = Run(trace, ttl);

        // Cached at 0, expires at 4: hit at 3, miss at 6.
        Assert.Equal((1, 2), (r.LocalHits, r.LocalMisses));
    }

    [Fact]
    public void A_write_makes_other_copies_stale_and_the_owner_serves_the_new_version()
    {
        AppTrace trace = Build(Read(0, 0, "a", etag: "e0"), Write(1, 1, "a", etag: "e1"), Read(2, 2, "a", etag: "e1"));

        AppResult r = Run(trace, new PolicySet { CapacityBytes = 1 << 20 });

        Assert.Equal((1, 1, 1), (r.Writes, r.LocalMisses, r.LocalHits));
        Assert.Equal(10 + 10 + 1, r.CachedMicros);
    }

    [Fact]
    public void A_non_owner_reads_remotely_once_then_locally()
    {
        // Two instances, round robin: even invocations on instance 0, odd on instance 1. Key k is owned by instance 0.
        string key = KeyOwnedBy(0);
        AppTrace trace = Build(Read(0, 0, key), Read(0, 1, key), Read(1, 3, key), Read(1, 2, key), Read(2, 5, "x" + key));
        // Invocation ordinals follow time: i0 -> 0, i1 -> 1, i3 -> 2 (instance 0), i2 -> 3 (instance 1), i5 -> 4.
        AppResult r = Run(trace, new PolicySet { CapacityBytes = 1 << 20 }, instances: 2);

        Assert.Equal(2, r.Instances);
        Assert.Equal(1, r.LocalMisses - (OwnerOf("x" + key) == 0 ? 1 : 0));
        Assert.Equal(1, r.RemoteHits);
        Assert.Equal(2, r.LocalHits);
    }

    [Fact]
    public void After_a_fixed_unload_pre_warm_runs_once_the_invocation_that_loaded_the_app_is_done()
    {
        // Unloaded after 10 idle minutes; the invocation at minute 60 loads the app and misses, the Load Daemon then
        // reloads "model" (read twice, hit once, before the unload), and the next invocation hits it.
        AppTrace trace = Build(Read(0, 0, "model"), Read(0, 0, "model"), Read(60, 1, "other"), Read(60, 2, "model"));
        var off = new PolicySet { CapacityBytes = 1 << 20, Prewarm = false };

        AppResult cold = Run(trace, off);
        AppResult warm = Run(trace, off with { Prewarm = true, KeepAlive = KeepAliveRule.Fixed });

        Assert.Equal((1, 1, 0), (cold.Unloads, cold.LocalHits, cold.Prewarmed));
        Assert.Equal((1, 2, 1), (warm.Unloads, warm.LocalHits, warm.Prewarmed));
    }

    [Fact]
    public void The_hybrid_histogram_keeps_an_hourly_app_loaded_until_it_has_ten_idle_times_then_pre_warms_it_ahead_of_each_hour()
    {
        // Fourteen hourly invocations. Under a fixed 10-minute unload every read misses. The histogram keeps the app for
        // its 4-hour range while it has fewer than 10 idle times; from the 11th it unloads the app at the next poll and
        // loads it again at 54 minutes (the 60-minute bin less the 10% margin), pre-warmed, so every read after the
        // first hits.
        AppTrace trace = Build([.. Enumerable.Range(0, 14).Select(h => Read(60L * h, h, "model"))]);

        AppResult fixedUnload = Run(trace, new PolicySet { CapacityBytes = 1 << 20 });
        AppResult hybrid = Run(trace, new PolicySet { CapacityBytes = 1 << 20, Prewarm = true });

        Assert.Equal(KeepAliveRule.HybridHistogram, new PolicySet { CapacityBytes = 1, Prewarm = true }.EffectiveKeepAlive);
        Assert.Equal((13, 0, 0), (fixedUnload.Unloads, fixedUnload.LocalHits, fixedUnload.Prewarmed));
        Assert.Equal((3, 13, 3), (hybrid.Unloads, hybrid.LocalHits, hybrid.Prewarmed));
    }

    [Fact]
    public void Prewarm_skips_an_object_read_once_without_hits()
    {
        AppTrace trace = Build(Read(0, 0, "once"), Read(60, 1, "other"), Read(120, 2, "once"));

        AppResult warm = Run(trace, new PolicySet { CapacityBytes = 1 << 20, Prewarm = true, KeepAlive = KeepAliveRule.Fixed });

        Assert.Equal((0, 0), (warm.Prewarmed, warm.LocalHits));
    }

    private static string KeyOwnedBy(int instance)
    {
        for (int i = 0; ; i++)
        {
            if (OwnerOf("k" + i) == instance)
            {
                return "k" + i;
            }
        }
    }

    private static int OwnerOf(string key) => new ConsistentHashRing([App + "/0", App + "/1"]).GetOwner(key) == App + "/0" ? 0 : 1;
}
