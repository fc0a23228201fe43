using FaaSCache.Bandwidth;
using FaaSCache.Caching;
using FaaSCache.Hosting;
using FaaSCache.Options;
using FaaSCache.Scaling;
using FaaSCache.Scaling.Voters;
using FaaSCache.SharedMemory;
using FaaSCache.Testing;
using Microsoft.Azure.WebJobs.Host.Scale;
using Microsoft.Extensions.Time.Testing;
using Xunit;

namespace FaaSCache.Scaling.Tests;

/// <summary>Each of §4's voters under synthetic conditions, on a fake clock; and the SDK's any-out / all-in aggregation.</summary>
[Trait("Category", "Unit")]
public sealed class VoterTests
{
    private const string App = "voter-app";

    [Fact]
    public async Task The_compute_voter_votes_out_when_concurrency_exceeds_the_target_and_asks_for_enough_instances()
    {
        var time = new FakeTimeProvider();
        var meter = new InvocationMeter(time);
        var voter = new ComputeScaleMonitor(meter, new FaaSCacheOptions(), App, time);
        // 20 invocations in flight against a target of 8 per instance.
        List<InvocationMeter.Invocation> running = [.. Enumerable.Range(0, 20).Select(_ => meter.Start())];

        VoterResult result = await voter.VoteAsync(1);

        Assert.Equal(ScaleVote.ScaleOut, result.Vote);
        Assert.Equal(3, result.TargetWorkerCount); // ceil(20 / 8)
        Assert.StartsWith("out: concurrency 20", result.Reason, StringComparison.Ordinal);
        running.ForEach(i => i.Dispose());
    }

    [Fact]
    public async Task The_compute_voter_votes_in_when_idle_and_when_the_load_fits_on_one_instance_fewer()
    {
        var time = new FakeTimeProvider();
        var meter = new InvocationMeter(time);
        var voter = new ComputeScaleMonitor(meter, new FaaSCacheOptions(), App, time);

        Assert.Equal(ScaleVote.ScaleIn, (await voter.VoteAsync(1)).Vote);

        // 10 invocations of 100 ms each in the last 10 s: 1/s x 0.1 s = concurrency 0.1 over 3 instances fits on 2.
        for (int i = 0; i < 10; i++)
        {
            using InvocationMeter.Invocation invocation = meter.Start();
            time.Advance(TimeSpan.FromMilliseconds(100));
        }

        VoterResult result = await voter.VoteAsync(3);
        Assert.Equal(ScaleVote.ScaleIn, result.Vote);
        Assert.Contains("fits on 2", result.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_compute_voter_votes_out_on_latency_above_its_target_while_busy()
    {
        var time = new FakeTimeProvider();
        var meter = new InvocationMeter(time);
        var voter = new ComputeScaleMonitor(meter, new FaaSCacheOptions { Scaling = { TargetLatency = TimeSpan.FromMilliseconds(200) } }, App, time);
        using (meter.Start())
        {
            time.Advance(TimeSpan.FromSeconds(1));
        }

        using InvocationMeter.Invocation busy = meter.Start();
        VoterResult result = await voter.VoteAsync(1);

        Assert.Equal(ScaleVote.ScaleOut, result.Vote);
        Assert.Contains("mean latency 1000 ms above the target 200 ms", result.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_cache_size_voter_follows_the_papers_rule_evicted_twice_out_busy_none_quiet_in()
    {
        var time = new FakeTimeProvider();
        using var shm = new TempShmDirectory();
        var storage = new InMemoryBlobStore();
        await using Cachelet cachelet = new CacheletBuilder("i1", [shm.Path]).Configure(o => o.CapacityBytes = 1 << 20).WithStorage(storage).WithTime(time).Build();
        var voter = new CacheSizeScaleMonitor(cachelet, App, time);
        string[] keys = ["votes/a", "votes/b", "votes/c"];
        foreach (string key in keys)
        {
            storage.Put(key, new byte[400_000]);
        }

        // Quiet: nothing read for a minute.
        time.Advance(TimeSpan.FromMinutes(1));
        VoterResult quiet = await voter.VoteAsync(2);
        Assert.Equal(ScaleVote.ScaleIn, quiet.Vote);
        Assert.StartsWith("in: low access frequency", quiet.Reason, StringComparison.Ordinal);

        // Busy and fitting: two objects read 20 times in 10 s.
        for (int i = 0; i < 10; i++)
        {
            (await cachelet.ReadAsync(keys[i % 2])).Dispose();
        }

        time.Advance(TimeSpan.FromSeconds(10));
        Assert.Equal(ScaleVote.None, (await voter.VoteAsync(2)).Vote);

        // Three objects where two fit, read round-robin: each is evicted more than once since the last query.
        for (int round = 0; round < 3; round++)
        {
            foreach (string key in keys)
            {
                (await cachelet.ReadAsync(key)).Dispose();
            }
        }

        time.Advance(TimeSpan.FromSeconds(10));
        VoterResult thrashing = await voter.VoteAsync(2);
        Assert.Equal(ScaleVote.ScaleOut, thrashing.Vote);
        Assert.Contains("evicted", thrashing.Reason, StringComparison.Ordinal);

        // "Since the last query": the same evictions do not count twice.
        time.Advance(TimeSpan.FromSeconds(10));
        Assert.NotEqual(ScaleVote.ScaleOut, (await voter.VoteAsync(2)).Vote);
    }

    [Fact]
    public async Task The_cache_size_voter_votes_out_when_objects_the_memory_daemon_evicted_are_read_again()
    {
        var time = new FakeTimeProvider();
        using var shm = new TempShmDirectory();
        var storage = new InMemoryBlobStore();
        await using Cachelet cachelet = new CacheletBuilder("i1", [shm.Path]).Configure(o => o.CapacityBytes = 4 << 20).WithStorage(storage).WithTime(time).Build();
        var voter = new CacheSizeScaleMonitor(cachelet, App, time);
        storage.Put("votes/model", new byte[400_000]);
        for (int i = 0; i < 20; i++)
        {
            (await cachelet.ReadAsync("votes/model")).Dispose();
        }

        time.Advance(TimeSpan.FromSeconds(10));
        Assert.Equal(ScaleVote.None, (await voter.VoteAsync(1)).Vote);

        // Evicted once for memory (not twice: the paper's rule alone would not vote), then read again.
        Assert.Equal(1, cachelet.EvictForMemory(1).Objects);
        for (int i = 0; i < 20; i++)
        {
            (await cachelet.ReadAsync("votes/model")).Dispose();
        }

        time.Advance(TimeSpan.FromSeconds(10));
        VoterResult result = await voter.VoteAsync(1);
        Assert.Equal(ScaleVote.ScaleOut, result.Vote);
        Assert.Equal(1, result.Metrics["readsAfterMemoryEviction"]);
        Assert.Contains("Memory Daemon evicted", result.Reason, StringComparison.Ordinal);

        // Counted since the last query only.
        for (int i = 0; i < 20; i++)
        {
            (await cachelet.ReadAsync("votes/model")).Dispose();
        }

        time.Advance(TimeSpan.FromSeconds(10));
        Assert.Equal(ScaleVote.None, (await voter.VoteAsync(1)).Vote);
    }

    [Fact]
    public async Task The_bandwidth_voter_holds_the_instances_a_recent_scaled_load_planned_and_releases_them_after()
    {
        var time = new FakeTimeProvider();
        var scaler = new BandwidthScaler(new TransferProfiler(time), time: time);
        var voter = new BandwidthScaleMonitor(scaler, App, time);
        scaler.Record(new ScaledLoadRecord(time.GetUtcNow(), "c/big", 800_000_000, Planned: 5, Used: 5, TakenBack: 0, TimeSpan.FromSeconds(3), "xxh3", "N=5"));

        VoterResult wanting = await voter.VoteAsync(3);
        Assert.Equal((ScaleVote.ScaleOut, (int?)5), (wanting.Vote, wanting.TargetWorkerCount));
        Assert.Equal(ScaleVote.None, (await voter.VoteAsync(5)).Vote);

        time.Advance(BandwidthScaleMonitor.HoldWindow + TimeSpan.FromSeconds(1));
        Assert.Equal(ScaleVote.ScaleIn, (await voter.VoteAsync(5)).Vote);
    }

    [Fact]
    public async Task The_bandwidth_voter_holds_the_instances_of_a_scaled_load_while_it_runs_however_long()
    {
        var time = new FakeTimeProvider();
        var scaler = new BandwidthScaler(new TransferProfiler(time), time: time);
        var voter = new BandwidthScaleMonitor(scaler, App, time);
        Assert.Equal(ScaleVote.ScaleIn, (await voter.VoteAsync(2)).Vote);

        using (scaler.Running(planned: 2))
        {
            time.Advance(BandwidthScaleMonitor.HoldWindow * 2);
            VoterResult holding = await voter.VoteAsync(2);
            Assert.Equal(ScaleVote.None, holding.Vote);
            Assert.Contains("1 scaled load(s) running or in the last 60 s", holding.Reason, StringComparison.Ordinal);
            Assert.Equal((ScaleVote.ScaleOut, (int?)2), ((await voter.VoteAsync(1)).Vote, (await voter.VoteAsync(1)).TargetWorkerCount));
        }

        // It ended without a record (it failed): nothing holds the instances any more.
        Assert.Equal(ScaleVote.ScaleIn, (await voter.VoteAsync(2)).Vote);
    }

    [Theory]
    [InlineData(new[] { ScaleVote.ScaleOut, ScaleVote.ScaleIn, ScaleVote.ScaleIn }, 3, ScaleVote.ScaleOut)]
    [InlineData(new[] { ScaleVote.None, ScaleVote.ScaleIn, ScaleVote.ScaleIn }, 3, ScaleVote.None)]
    [InlineData(new[] { ScaleVote.ScaleIn, ScaleVote.ScaleIn, ScaleVote.ScaleIn }, 3, ScaleVote.ScaleIn)]
    [InlineData(new[] { ScaleVote.ScaleIn, ScaleVote.ScaleIn }, 0, ScaleVote.None)]
    [InlineData(new ScaleVote[0], 2, ScaleVote.ScaleIn)]
    public void Aggregation_scales_out_if_any_voter_wants_out_and_in_only_if_all_agree(ScaleVote[] votes, int workers, ScaleVote expected)
        => Assert.Equal(expected, ScaleVoteAggregator.Aggregate(votes, workers));

    [Fact]
    public async Task The_aggregator_asks_only_the_voters_host_json_turns_on_and_takes_the_largest_target()
    {
        var time = new FakeTimeProvider();
        var meter = new InvocationMeter(time);
        var options = new FaaSCacheOptions { Scaling = { CacheSize = false } };
        var scaler = new BandwidthScaler(new TransferProfiler(time), time: time);
        scaler.Record(new ScaledLoadRecord(time.GetUtcNow(), "c/big", 800_000_000, Planned: 4, Used: 4, TakenBack: 0, TimeSpan.FromSeconds(3), "xxh3", "N=4"));
        IFaaSCacheVoter[] voters = [new ComputeScaleMonitor(meter, options, App, time), new BandwidthScaleMonitor(scaler, App, time)];
        var aggregator = new ScaleVoteAggregator(voters, options, meter, "i1");

        InstanceVotes votes = await aggregator.VoteAsync(2);

        Assert.Equal(["compute", "bandwidth"], votes.Voters.Select(v => v.Voter));
        Assert.Equal((ScaleVote.ScaleOut, (int?)4), (votes.Vote, votes.TargetWorkerCount));
    }
}
