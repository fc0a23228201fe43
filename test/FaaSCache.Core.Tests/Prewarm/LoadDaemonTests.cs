namespace FaaSCache.Core.Tests.Prewarm;

[Trait("Category", "Unit")]
public sealed class LoadDaemonTests
{
    private const int KiB = 1024;

    [Fact]
    public async Task Each_of_three_instances_loads_only_the_selected_keys_it_owns()
    {
        await using var h = new PrewarmHarness();
        string[] members = ["i-a", "i-b", "i-c"];
        var objects = new List<(string, long, string?)>();
        for (int i = 0; i < 24; i++)
        {
            string etag = await h.UploadAsync($"obj-{i}", 4 * KiB, seed: i);
            objects.Add((h.Key($"obj-{i}"), 4 * KiB, etag));
        }

        // Accessed once in each of two lifetimes: selected by repeated access across snapshots.
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", [.. objects]);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", [.. objects]);
        PrewarmHarness.Instance[] instances = [.. members.Select(m => h.CreateInstance(m, members))];

        foreach (PrewarmHarness.Instance instance in instances)
        {
            LoadDaemonStatus status = await instance.Daemon.RunAsync();
            Assert.Equal("done", status.State);
            Assert.Equal(24, status.Candidates);
        }

        foreach (PrewarmHarness.Instance instance in instances)
        {
            string[] owned = [.. objects.Select(o => o.Item1).Where(k => instance.Owners.GetOwner(k) == instance.Owners.SelfId)];
            string[] cached = [.. objects.Select(o => o.Item1).Where(instance.Cachelet.Contains)];
            Assert.NotEmpty(owned);
            Assert.Equal(owned, cached);
            Assert.Equal(owned.Length, instance.Daemon.Status().Loaded);
            Assert.Equal(owned.Order(StringComparer.Ordinal), instance.Daemon.Status().LoadedKeys.Order(StringComparer.Ordinal));
            // A pre-warm load is no access: the object earns its next selection by being read.
            Assert.All(cached, k => Assert.Null(instance.Cachelet.GetStatistics(k)));
        }

        Assert.Equal(24, instances.Sum(i => i.Cachelet.Count));
    }

    [Fact]
    public async Task An_object_seen_in_one_snapshot_only_is_not_loaded_below_the_hit_rate_threshold()
    {
        await using var h = new PrewarmHarness();
        string etag = await h.UploadAsync("once", KiB);
        await h.WriteMissSnapshotAsync(TimeSpan.FromMinutes(30), "old", (h.Key("once"), KiB, etag));
        PrewarmHarness.Instance i = h.CreateInstance("i-a");

        LoadDaemonStatus status = await i.Daemon.RunAsync();

        Assert.Equal(0, status.Candidates);
        Assert.Equal(1, status.SnapshotsRead);
        Assert.False(i.Cachelet.Contains(h.Key("once")));
    }

    [Fact]
    public async Task Under_strong_an_object_changed_since_its_snapshot_is_skipped()
    {
        await using var h = new PrewarmHarness();
        string old = await h.UploadAsync("model", KiB, seed: 1);
        await h.UploadAsync("model", KiB, seed: 2);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", (h.Key("model"), KiB, old));
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", (h.Key("model"), KiB, old));
        PrewarmHarness.Instance i = h.CreateInstance("i-a", configure: o => o.Consistency = ConsistencyPreset.Strong);

        LoadDaemonStatus status = await i.Daemon.RunAsync();

        Assert.True(i.Daemon.SkipsChangedVersions);
        Assert.Equal(1, status.SkippedChanged);
        Assert.Equal(0, status.Loaded);
        Assert.False(i.Cachelet.Contains(h.Key("model")));
    }

    [Theory]
    [InlineData(ConsistencyPreset.Local)]
    [InlineData(ConsistencyPreset.Owner)]
    [InlineData(ConsistencyPreset.OwnerLocalRead)]
    public async Task Under_other_presets_the_current_version_of_a_changed_object_is_loaded(ConsistencyPreset preset)
    {
        await using var h = new PrewarmHarness();
        string old = await h.UploadAsync("model", KiB, seed: 1);
        string current = await h.UploadAsync("model", KiB, seed: 2);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", (h.Key("model"), KiB, old));
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", (h.Key("model"), KiB, old));
        PrewarmHarness.Instance i = h.CreateInstance("i-a", configure: o => o.Consistency = preset);

        LoadDaemonStatus status = await i.Daemon.RunAsync();

        Assert.False(i.Daemon.SkipsChangedVersions);
        Assert.Equal(1, status.Loaded);
        Assert.True(i.Cachelet.HasVersion(h.Key("model"), current));
    }

    [Fact]
    public async Task Prewarm_fills_free_capacity_only_and_never_evicts()
    {
        await using var h = new PrewarmHarness();
        string big = await h.UploadAsync("big", 768 * KiB, seed: 1);
        string small = await h.UploadAsync("small", 128 * KiB, seed: 2);
        await h.UploadAsync("resident", 512 * KiB, seed: 3);
        (string, long, string?)[] objects = [(h.Key("big"), 768 * KiB, big), (h.Key("small"), 128 * KiB, small)];
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", objects);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", objects);
        PrewarmHarness.Instance i = h.CreateInstance("i-a", configure: o => o.CapacityBytes = 1024 * KiB);
        (await i.Cachelet.ReadAsync(h.Key("resident"))).Dispose();

        LoadDaemonStatus status = await i.Daemon.RunAsync();

        // The largest benefit comes first but does not fit beside the resident object; the smaller one does.
        Assert.Equal(1, status.SkippedNoRoom);
        Assert.Equal([h.Key("small")], status.LoadedKeys);
        Assert.True(i.Cachelet.Contains(h.Key("resident")));
        Assert.False(i.Cachelet.Contains(h.Key("big")));
    }

    [Fact]
    public async Task A_corrupt_snapshot_is_skipped_and_the_others_are_used()
    {
        await using var h = new PrewarmHarness();
        string etag = await h.UploadAsync("labels", KiB);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", (h.Key("labels"), KiB, etag));
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", (h.Key("labels"), KiB, etag));
        long ticks = (h.Time.GetUtcNow() - TimeSpan.FromMinutes(5)).UtcTicks;
        await h.Storage.UploadAsync($"{SnapshotStore.Container}/{PrewarmHarness.App}/snapshots/{ticks:D19}-broken.json", new MemoryStream("{ not json"u8.ToArray()), null);
        await h.Storage.UploadAsync($"{SnapshotStore.Container}/{PrewarmHarness.App}/snapshots/no-stamp.json", new MemoryStream("{}"u8.ToArray()), null);
        PrewarmHarness.Instance i = h.CreateInstance("i-a");

        LoadDaemonStatus status = await i.Daemon.RunAsync();

        Assert.Equal("done", status.State);
        Assert.Equal(2, status.SnapshotsSkipped);
        Assert.Equal(2, status.SnapshotsRead);
        Assert.Equal(1, status.Loaded);
    }

    [Fact]
    public async Task Stopping_writes_a_snapshot_of_this_lifetimes_accesses_that_the_next_load_reads()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("in", 2 * KiB);
        PrewarmHarness.Instance first = h.CreateInstance("i-a");
        for (int n = 0; n < 3; n++)
        {
            (await first.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        }

        await first.Daemon.StopAsync(CancellationToken.None);

        SnapshotListing listing = await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10);
        UnloadSnapshot snapshot = Assert.Single(listing.Snapshots);
        Assert.Equal("i-a", snapshot.InstanceId);
        SnapshotEntry entry = Assert.Single(snapshot.Entries);
        Assert.Equal((2L, 1L, 2L * KiB), (entry.OwnHits, entry.OwnMisses, entry.SizeBytes));
        Assert.Equal(h.Snapshots.KeyOf(snapshot), first.Daemon.Status().LastSnapshot);

        h.Time.Advance(TimeSpan.FromMinutes(10));
        PrewarmHarness.Instance next = h.CreateInstance("i-b");
        LoadDaemonStatus status = await next.Daemon.RunAsync();
        Assert.Equal([h.Key("in")], status.LoadedKeys);
    }

    [Fact]
    public async Task With_prewarm_off_nothing_is_loaded_and_no_snapshot_is_written()
    {
        await using var h = new PrewarmHarness();
        string etag = await h.UploadAsync("in", KiB);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", (h.Key("in"), KiB, etag));
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", (h.Key("in"), KiB, etag));
        PrewarmHarness.Instance i = h.CreateInstance("i-a", configure: o => o.Prewarm.Enabled = false);

        LoadDaemonStatus status = await i.Daemon.RunAsync();
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        await i.Daemon.StopAsync(CancellationToken.None);

        Assert.Equal("off", status.State);
        Assert.Equal(0, status.Loaded);
        Assert.Equal(2, (await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10)).Snapshots.Count);
    }
}
