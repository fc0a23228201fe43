namespace FaaSCache.Core.Tests.Prewarm;

[Trait("Category", "Unit")]
public sealed class PrewarmSelectorTests
{
    private const long MB = 1_000_000;
    private static readonly DateTimeOffset Now = new(2026, 11, 25, 12, 0, 0, TimeSpan.Zero);

    [Fact]
    public void Selects_an_object_whose_hit_rate_exceeds_the_threshold()
    {
        // hot: 3 hits of 4 reads = 0.75; cold: 1 hit of 4 reads = 0.25 — both accessed 4 times, so use one access each
        // side of the threshold with a single read to isolate the hit-rate rule.
        UnloadSnapshot s = Snap(Now.AddMinutes(-5), "a",
            new SnapshotEntry { Key = "c/hot", SizeBytes = MB, Version = "v1", OwnHits = 1 },
            new SnapshotEntry { Key = "c/cold", SizeBytes = MB, Version = "v1", OwnMisses = 1 });

        IReadOnlyList<PrewarmCandidate> picked = PrewarmSelector.Select([s], Now, TimeSpan.FromHours(1), hitRateThreshold: 0.5);

        PrewarmCandidate only = Assert.Single(picked);
        Assert.Equal("c/hot", only.Key);
        Assert.Equal(1.0, only.HitRate);
        Assert.Equal(1, only.Accesses);
    }

    [Fact]
    public void Hit_rate_at_the_threshold_is_not_enough()
    {
        UnloadSnapshot s = Snap(Now.AddMinutes(-5), "a",
            new SnapshotEntry { Key = "c/half", OwnHits = 1, PeerMisses = 1 });

        Assert.Empty(PrewarmSelector.Select([s], Now, TimeSpan.FromHours(1), hitRateThreshold: 0.5));
        Assert.Single(PrewarmSelector.Select([s], Now, TimeSpan.FromHours(1), hitRateThreshold: 0.49));
    }

    [Fact]
    public void Selects_an_object_missed_once_in_each_of_two_snapshots()
    {
        // The model of a rarely-invoked app: one miss per load, never a hit, reused across unload/load periods (§3.3).
        SnapshotEntry model = new() { Key = "models/m.onnx", SizeBytes = 50 * MB, Version = "v1", OwnMisses = 1 };
        UnloadSnapshot first = Snap(Now.AddHours(-3), "a", model);
        UnloadSnapshot second = Snap(Now.AddHours(-1), "b", model with { Version = "v2", SizeBytes = 51 * MB });

        Assert.Empty(PrewarmSelector.Select([first], Now, TimeSpan.FromHours(4), hitRateThreshold: 0.5));
        PrewarmCandidate c = Assert.Single(PrewarmSelector.Select([first, second], Now, TimeSpan.FromHours(4), hitRateThreshold: 0.5));

        Assert.Equal(2, c.Accesses);
        Assert.Equal(0, c.HitRate);
        Assert.Equal("v2", c.Version);
        Assert.Equal(51 * MB, c.SizeBytes);
    }

    [Fact]
    public void Ignores_snapshots_outside_the_look_back_window()
    {
        SnapshotEntry e = new() { Key = "c/k", SizeBytes = MB, OwnMisses = 1 };
        UnloadSnapshot old = Snap(Now.AddHours(-5), "a", e);
        UnloadSnapshot recent = Snap(Now.AddHours(-1), "a", e);
        UnloadSnapshot future = Snap(Now.AddHours(1), "a", e);

        Assert.Empty(PrewarmSelector.Select([old, recent, future], Now, TimeSpan.FromHours(4), hitRateThreshold: 0.5));
        Assert.Single(PrewarmSelector.Select([old, recent, future], Now, TimeSpan.FromHours(5), hitRateThreshold: 0.5));
    }

    [Fact]
    public void A_remote_read_counted_at_reader_and_owner_is_one_access()
    {
        UnloadSnapshot reader = Snap(Now.AddMinutes(-2), "a", new SnapshotEntry { Key = "c/k", OwnMisses = 1 });
        UnloadSnapshot owner = Snap(Now.AddMinutes(-2), "b", new SnapshotEntry { Key = "c/k", SizeBytes = MB, Version = "v", PeerMisses = 1 });

        Assert.Empty(PrewarmSelector.Select([reader, owner], Now, TimeSpan.FromHours(1), hitRateThreshold: 0.5));
    }

    [Fact]
    public void Size_and_version_come_from_the_latest_snapshot_that_cached_the_object()
    {
        UnloadSnapshot cached = Snap(Now.AddMinutes(-30), "a", new SnapshotEntry { Key = "c/k", SizeBytes = 7 * MB, Version = "v7", OwnMisses = 1 });
        UnloadSnapshot evicted = Snap(Now.AddMinutes(-10), "a", new SnapshotEntry { Key = "c/k", OwnMisses = 1 });

        PrewarmCandidate c = Assert.Single(PrewarmSelector.Select([evicted, cached], Now, TimeSpan.FromHours(1), 0.5));

        Assert.Equal(7 * MB, c.SizeBytes);
        Assert.Equal("v7", c.Version);
    }

    [Fact]
    public void Orders_by_expected_benefit_then_by_key()
    {
        UnloadSnapshot s = Snap(Now.AddMinutes(-1), "a",
            new SnapshotEntry { Key = "c/small-often", SizeBytes = MB / 10, OwnHits = 10 },
            new SnapshotEntry { Key = "c/large-twice", SizeBytes = 100 * MB, OwnMisses = 2 },
            new SnapshotEntry { Key = "c/b-tie", SizeBytes = MB, OwnHits = 2 },
            new SnapshotEntry { Key = "c/a-tie", SizeBytes = MB, OwnHits = 2 });

        IReadOnlyList<PrewarmCandidate> picked = PrewarmSelector.Select([s], Now, TimeSpan.FromHours(1), 0.5);

        Assert.Equal(["c/large-twice", "c/small-often", "c/a-tie", "c/b-tie"], picked.Select(c => c.Key));
        Assert.Equal(2 * PrewarmSelector.MissCostSeconds(100 * MB), picked[0].ExpectedBenefit, 9);
    }

    [Fact]
    public void Writes_count_as_accesses()
    {
        UnloadSnapshot s = Snap(Now.AddMinutes(-1), "a", new SnapshotEntry { Key = "c/out", SizeBytes = MB, OwnWrites = 1, PeerWrites = 2 });

        PrewarmCandidate c = Assert.Single(PrewarmSelector.Select([s], Now, TimeSpan.FromHours(1), 0.5));
        Assert.Equal(2, c.Accesses);
        Assert.Equal(0, c.HitRate);
    }

    [Theory]
    [InlineData(0, 168)]
    [InlineData(-1, 168)]
    [InlineData(double.NaN, 168)]
    [InlineData(0.01, 168)]
    [InlineData(1, 10)]
    [InlineData(0.5, 20)]
    [InlineData(10, 1)]
    [InlineData(1000, 1)]
    public void Look_back_covers_ten_invocations_within_bounds(double perHour, double expectedHours)
    {
        Assert.Equal(expectedHours, PrewarmSelector.LookBackWindow(perHour).TotalHours, 9);
    }

    private static UnloadSnapshot Snap(DateTimeOffset at, string instance, params SnapshotEntry[] entries) =>
        new() { AppName = "app", InstanceId = instance, TakenAt = at, Entries = entries };
}
