namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>The hand-off when the ring grows: members write their snapshots, the newcomer waits for them and loads its part.</summary>
[Trait("Category", "Unit")]
public sealed class ScaleOutHandOffTests
{
    private const int KiB = 1024;
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task A_newcomer_waits_for_the_running_members_snapshot_and_loads_the_keys_it_now_owns()
    {
        await using var h = new PrewarmHarness();
        string[] keys = [.. Enumerable.Range(0, 16).Select(i => h.Key($"block-{i}"))];
        for (int i = 0; i < keys.Length; i++)
        {
            await h.UploadAsync($"block-{i}", 4 * KiB, seed: i);
        }

        // Alone, the first instance reads every block twice (a sum, then the same sum after its memory evictions).
        PrewarmHarness.Instance first = h.CreateInstance("i-1");
        for (int round = 0; round < 2; round++)
        {
            foreach (string key in keys)
            {
                (await first.Cachelet.ReadAsync(key)).Dispose();
            }
        }

        PrewarmHarness.Instance second = h.CreateInstance("i-2", ["i-1", "i-2"], handOffWait: Wait);
        Task<LoadDaemonStatus> load = second.Daemon.RunAsync();
        h.Time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(load.IsCompleted);

        // The first sees the newcomer at its next membership read and hands off.
        first.Owners.Update(["i-1", "i-2"]);
        LoadDaemonStatus status = await AdvanceUntilAsync(h, load);

        Assert.NotNull(first.Daemon.Status().LastSnapshot);
        string[] owned = [.. keys.Where(k => second.Owners.GetOwner(k) == "i-2")];
        Assert.NotEmpty(owned);
        Assert.NotEqual(keys.Length, owned.Length);
        Assert.Equal(16, status.Candidates);
        Assert.Equal(owned.Order(StringComparer.Ordinal), status.LoadedKeys.Order(StringComparer.Ordinal));
        Assert.All(owned, k => Assert.True(second.Cachelet.Contains(k)));
    }

    [Fact]
    public async Task A_newcomer_whose_members_hand_nothing_off_loads_after_its_bounded_wait()
    {
        await using var h = new PrewarmHarness();
        string etag = await h.UploadAsync("in", KiB);
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(2), "old-1", (h.Key("in"), KiB, etag));
        await h.WriteMissSnapshotAsync(TimeSpan.FromHours(1), "old-2", (h.Key("in"), KiB, etag));
        PrewarmHarness.Instance alone = h.CreateInstance("i-2", ["i-1", "i-2"], handOffWait: Wait);

        Task<LoadDaemonStatus> load = alone.Daemon.RunAsync();
        LoadDaemonStatus status = await AdvanceUntilAsync(h, load);

        Assert.Equal("done", status.State);
        Assert.Equal(1, status.Candidates);
        Assert.True(h.Time.GetUtcNow() - new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero) >= Wait);
    }

    [Fact]
    public async Task Each_snapshot_of_a_lifetime_supersedes_the_last_so_no_access_is_counted_twice()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("in", 2 * KiB);
        PrewarmHarness.Instance i = h.CreateInstance("i-1");
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();

        string? firstKey = await i.Daemon.WriteHandOffSnapshotAsync("i-2 joined");
        Assert.NotNull(firstKey);
        h.Time.Advance(TimeSpan.FromMinutes(1));
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        string? secondKey = await i.Daemon.WriteHandOffSnapshotAsync("i-3 joined");
        Assert.NotNull(secondKey);
        Assert.NotEqual(firstKey, secondKey);

        h.Time.Advance(TimeSpan.FromMinutes(1));
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        await i.Daemon.StopAsync(CancellationToken.None);

        UnloadSnapshot snapshot = Assert.Single((await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10)).Snapshots);
        Assert.Equal(i.Daemon.Status().LastSnapshot, h.Snapshots.KeyOf(snapshot));
        SnapshotEntry entry = Assert.Single(snapshot.Entries);
        Assert.Equal(3, entry.OwnHits + entry.OwnMisses);
    }

    [Fact]
    public async Task With_nothing_accessed_or_prewarm_off_no_hand_off_snapshot_is_written()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("in", KiB);
        PrewarmHarness.Instance idle = h.CreateInstance("i-1");
        idle.Owners.Update(["i-1", "i-9"]);
        Assert.Null(await idle.Daemon.WriteHandOffSnapshotAsync("i-9 joined"));

        PrewarmHarness.Instance off = h.CreateInstance("i-2", configure: o => o.Prewarm.Enabled = false);
        (await off.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        off.Owners.Update(["i-2", "i-9"]);
        Assert.Null(await off.Daemon.WriteHandOffSnapshotAsync("i-9 joined"));
        Assert.Empty((await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10)).Snapshots);
    }

    // The newcomer polls storage on the fake clock: move it on until the load is done (bounded).
    private static async Task<LoadDaemonStatus> AdvanceUntilAsync(PrewarmHarness h, Task<LoadDaemonStatus> load)
    {
        for (int step = 0; step < 400 && !load.IsCompleted; step++)
        {
            h.Time.Advance(TimeSpan.FromMilliseconds(100));
            await Task.WhenAny(load, Task.Delay(10));
        }

        Assert.True(load.IsCompleted, "The Load Daemon did not finish within 40 s of fake time.");
        return await load;
    }
}
