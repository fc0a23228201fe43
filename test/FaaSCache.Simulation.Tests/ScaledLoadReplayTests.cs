using FaaSCache.Bandwidth;
using FaaSCache.Simulation.Engine;

namespace FaaSCache.Simulation.Tests;

/// <summary>The Fig. 12 replay: the cachelet's scaled load over given links, and the planner's N beside it.</summary>
[Trait("Category", "Unit")]
public sealed class ScaledLoadReplayTests
{
    // The paper's links (90 MB/s storage, 10 ms first byte, 750 MB/s between instances), a 1 ms peer first byte, T_Load 3 s.
    private static readonly TransferProfile Links = new(90e6, TimeSpan.FromMilliseconds(10), 750e6, TimeSpan.FromMilliseconds(1), TimeSpan.FromSeconds(3));

    [Fact]
    public void One_instance_pays_the_first_byte_then_reads_at_the_storage_rate()
    {
        Assert.Equal(0.010 + (40e6 / 90e6), ScaledLoadReplay.Seconds(40_000_000, 1, cold: false, Links), 9);
    }

    [Fact]
    public void Running_helpers_each_stream_a_range_beside_the_requesters_own()
    {
        // N = 4: the requester reads 10 MB itself; each helper's 10 MB flows at 90 MB/s (3 x 90 < 750 on the requester's
        // link) after the peer's and storage's first bytes.
        double expected = 0.010 + 0.001 + 0.010 + (10e6 / 90e6);

        Assert.Equal(expected, ScaledLoadReplay.Seconds(40_000_000, 4, cold: false, Links), 9);
    }

    [Fact]
    public void Helpers_share_the_requesters_inbound_link()
    {
        var slowLink = Links with { PeerBytesPerSecond = 120e6 };
        // Five helpers on a 120 MB/s inbound link: 24 MB/s each, below their 90 MB/s storage rate.
        double perHelper = (400e6 - (400e6 / 6)) / 5;

        Assert.Equal(0.021 + (perHelper / 24e6), ScaledLoadReplay.Seconds(400_000_000, 6, cold: false, slowLink), 9);
    }

    [Fact]
    public void A_400_KB_object_stays_on_one_instance()
    {
        double alone = ScaledLoadReplay.Seconds(400_000, 1, cold: false, Links);

        Assert.All(Enumerable.Range(1, 6), n => Assert.Equal(alone, ScaledLoadReplay.Seconds(400_000, n, cold: true, Links)));
        Assert.Equal(1, ScaledLoadReplay.PlannedInstances(400_000, running: 6, maxInstances: 6, Links));
        Assert.Equal(1, ScaledLoadReplay.PlannedInstances(400_000, running: 1, maxInstances: 6, Links));
    }

    [Fact]
    public void Cold_helpers_cost_T_Load_and_take_what_the_requester_has_not_read()
    {
        // 800 MB, N = 4 cold: by 3 s the requester holds 270 MB and the 1 MiB block it is reading; the helpers split the rest.
        double reserved = (Math.Floor(90e6 * 3 / (1 << 20)) + 1) * (1 << 20);
        double share = (800e6 - reserved) / 4;
        double expected = 0.010 + 3 + 0.001 + 0.010 + (share / 90e6);

        Assert.Equal(expected, ScaledLoadReplay.Seconds(800_000_000, 4, cold: true, Links), 9);
        Assert.True(ScaledLoadReplay.Seconds(800_000_000, 4, cold: true, Links) > 3 + ScaledLoadReplay.Seconds(200_000_000, 1, cold: false, Links) / 2);
        Assert.True(ScaledLoadReplay.Seconds(800_000_000, 4, cold: true, Links) > ScaledLoadReplay.Seconds(800_000_000, 4, cold: false, Links));
        // 40 MB is read in 0.45 s, long before a helper could start: cold helpers change nothing.
        Assert.Equal(ScaledLoadReplay.Seconds(40_000_000, 1, cold: false, Links), ScaledLoadReplay.Seconds(40_000_000, 4, cold: true, Links));
    }

    [Fact]
    public void The_planner_chooses_an_N_within_ten_percent_of_the_replays_best_for_every_size()
    {
        IReadOnlyList<ScaledLoadRow> rows = ScaledLoadReplay.Run(ScaledLoadReplay.PaperSizes, Links);
        double Ratio(long size, bool cold)
        {
            var group = rows.Where(r => r.SizeBytes == size && r.Cold == cold).ToList();
            return group.First(r => r.Instances == r.PlannerInstances).Seconds / group.Min(r => r.Seconds);
        }

        // 400 KB is never split, and 40 MB is read before a cold helper could start: one instance is the best, as planned.
        Assert.Equal((1.0, 1.0, 1.0), (Ratio(400_000, cold: false), Ratio(400_000, cold: true), Ratio(40_000_000, cold: true)));
        // Hundreds of MB: the planner predicts the load as the cachelet executes it and takes the fewest instances within
        // 10% of the fastest, so it is never more than 10% slower than the best fixed N.
        foreach (long size in ScaledLoadReplay.PaperSizes)
        {
            Assert.InRange(Ratio(size, cold: false), 1.0, 1.10);
            Assert.InRange(Ratio(size, cold: true), 1.0, 1.10);
        }
    }

    [Fact]
    public void The_CSV_has_one_row_per_size_helper_state_and_N()
    {
        string path = Path.Combine(Path.GetTempPath(), $"fig12-{Guid.NewGuid():N}.csv");
        try
        {
            ScaledLoadReplay.WriteCsv(path, ScaledLoadReplay.Run(ScaledLoadReplay.PaperSizes, Links));

            string[] lines = File.ReadAllLines(path);
            Assert.Equal("size_bytes,helpers,instances,seconds,improvement_pct,planner_n", lines[0]);
            Assert.Equal(1 + (4 * 2 * 6), lines.Length);
            Assert.StartsWith("400000,running,1,", lines[1], StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(path);
        }
    }
}
