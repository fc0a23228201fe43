using FaaSCache.Prewarm;
using Xunit;

namespace FaaSCache.Core.Tests.Prewarm;

/// <summary>§4 with §3.3: the snapshot a cachelet writes before it asks for a cache-size scale-out.</summary>
[Trait("Category", "Unit")]
public sealed class ScaleOutHandOffTests
{
    private const int KiB = 1024;

    [Fact]
    public async Task TheInstanceAScaleOutBringsLoadsTheKeysItNowOwnsFromTheSnapshotWrittenBeforeTheVote()
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

        string? written = await first.Daemon.BeforeScaleOutAsync("out: reads after memory evictions");
        Assert.NotNull(written);
        Assert.Equal(written, first.Daemon.Status().LastSnapshot);

        h.Time.Advance(TimeSpan.FromSeconds(5));
        PrewarmHarness.Instance second = h.CreateInstance("i-2", ["i-1", "i-2"]);
        LoadDaemonStatus status = await second.Daemon.RunAsync();

        string[] owned = [.. keys.Where(k => second.Owners.GetOwner(k) == "i-2")];
        Assert.NotEmpty(owned);
        Assert.NotEqual(keys.Length, owned.Length);
        Assert.Equal(owned.Order(StringComparer.Ordinal), status.LoadedKeys.Order(StringComparer.Ordinal));
        Assert.All(owned, k => Assert.True(second.Cachelet.Contains(k)));
    }

    [Fact]
    public async Task HandOffSnapshotsAreAtMostOnePerIntervalAndTheUnloadSnapshotSupersedesThem()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("in", 2 * KiB);
        PrewarmHarness.Instance i = h.CreateInstance("i-1");
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();

        string? firstKey = await i.Daemon.BeforeScaleOutAsync("out");
        Assert.NotNull(firstKey);
        // The controller polls every few seconds and the vote stays out until the instance arrives: one snapshot.
        h.Time.Advance(TimeSpan.FromSeconds(2));
        Assert.Null(await i.Daemon.BeforeScaleOutAsync("out"));

        h.Time.Advance(LoadDaemon.HandOffInterval);
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        string? secondKey = await i.Daemon.BeforeScaleOutAsync("out");
        Assert.NotNull(secondKey);
        Assert.NotEqual(firstKey, secondKey);

        h.Time.Advance(TimeSpan.FromMinutes(1));
        (await i.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        await i.Daemon.StopAsync(CancellationToken.None);

        // Statistics are cumulative: only the last snapshot of the lifetime is kept, so no access is counted twice.
        UnloadSnapshot snapshot = Assert.Single((await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10)).Snapshots);
        Assert.Equal(i.Daemon.Status().LastSnapshot, h.Snapshots.KeyOf(snapshot));
        Assert.NotEqual(secondKey, i.Daemon.Status().LastSnapshot);
        SnapshotEntry entry = Assert.Single(snapshot.Entries);
        Assert.Equal(3, entry.OwnHits + entry.OwnMisses);
    }

    [Fact]
    public async Task WithNothingAccessedOrPrewarmOffNoHandOffSnapshotIsWritten()
    {
        await using var h = new PrewarmHarness();
        await h.UploadAsync("in", KiB);
        PrewarmHarness.Instance idle = h.CreateInstance("i-1");
        Assert.Null(await idle.Daemon.BeforeScaleOutAsync("out"));

        PrewarmHarness.Instance off = h.CreateInstance("i-2", configure: o => o.Prewarm.Enabled = false);
        (await off.Cachelet.ReadAsync(h.Key("in"))).Dispose();
        Assert.Null(await off.Daemon.BeforeScaleOutAsync("out"));
        Assert.Empty((await h.Snapshots.ReadAsync(DateTimeOffset.MinValue, 10)).Snapshots);
    }
}
