namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class CacheletEvictionTests
{
    private const int KiB = 1024;

    // Two members on a real ring: keys are picked so that "self" owns some and "other" the rest.
    private static readonly RingOwnerLocator Owners = new("self", ["self", "other"]);

    [Theory]
    [InlineData(EvictionPolicy.Lru, new[] { "nS", "nL" }, new[] { "nS", "nL", "oS", "oL" })]
    [InlineData(EvictionPolicy.Size, new[] { "nL" }, new[] { "nL", "nS", "oL" })]
    public async Task Eviction_follows_the_policy_order(EvictionPolicy policy, string[] firstVictims, string[] allVictims)
    {
        await using var h = await CacheletHarness.CreateAsync(
            o =>
            {
                o.Consistency = ConsistencyPreset.Local;
                o.CapacityBytes = 1024 * KiB;
                o.Eviction.Policy = policy;
                o.Eviction.SizeThresholdBytes = 64 * KiB;
            },
            owners: Owners,
            instanceId: "self");
        var keys = new Dictionary<string, string>
        {
            ["nS"] = KeyOwnedBy(h, "other", "ns"),
            ["nL"] = KeyOwnedBy(h, "other", "nl"),
            ["oS"] = KeyOwnedBy(h, "self", "os"),
            ["oL"] = KeyOwnedBy(h, "self", "ol"),
        };
        var sizes = new Dictionary<string, int> { ["nS"] = 40 * KiB, ["nL"] = 300 * KiB, ["oS"] = 40 * KiB, ["oL"] = 300 * KiB };

        // Inserted in this order: non-owned small, non-owned large, owned small, owned large (680 KiB).
        foreach (string name in new[] { "nS", "nL", "oS", "oL" })
        {
            await h.Cachelet.WriteAsync(keys[name], new byte[sizes[name]]);
        }

        await h.Cachelet.WriteAsync(KeyOwnedBy(h, "self", "a"), new byte[300 * KiB]);
        await h.Cachelet.WriteAsync(KeyOwnedBy(h, "self", "b"), new byte[300 * KiB]);
        Assert.Equal(firstVictims, Evicted(h, keys));

        await h.Cachelet.WriteAsync(KeyOwnedBy(h, "self", "c"), new byte[300 * KiB]);
        Assert.Equal(allVictims.Order(), Evicted(h, keys).Order());
        Assert.True(h.Cachelet.BytesCached <= 1024 * KiB);
        Assert.Equal(allVictims.Length, h.Cachelet.Metrics.Snapshot().Evictions);
        Assert.Equal(1, h.Cachelet.GetStatistics(keys[allVictims[0]])!.Evictions);
        Assert.Equal(h.Cachelet.Count, h.MapFiles().Length);
    }

    [Fact]
    public async Task Lru_evicts_the_least_recently_used_owned_object_when_no_non_owned_one_is_left()
    {
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.CapacityBytes = 1024 * KiB; });
        string[] keys = [h.Key("x1"), h.Key("x2"), h.Key("x3")];
        foreach (string key in keys)
        {
            await h.Cachelet.WriteAsync(key, new byte[300 * KiB]);
        }

        (await h.Cachelet.ReadAsync(keys[0])).Dispose();
        await h.Cachelet.WriteAsync(h.Key("x4"), new byte[300 * KiB]);

        Assert.True(h.Cachelet.Contains(keys[0]));
        Assert.False(h.Cachelet.Contains(keys[1]));
        Assert.True(h.Cachelet.Contains(keys[2]));
    }

    [Fact]
    public async Task An_object_in_use_is_never_evicted()
    {
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.CapacityBytes = 1024 * KiB; });
        byte[] content = CacheletHarness.RandomBytes(600 * KiB);
        await h.UploadDirectAsync("in-use", content);
        using ObjectLease held = await h.Cachelet.ReadAsync(h.Key("in-use"));

        await h.Cachelet.WriteAsync(h.Key("other1"), new byte[300 * KiB]);
        await h.Cachelet.WriteAsync(h.Key("other2"), new byte[300 * KiB]);
        WriteReceipt third = await h.Cachelet.WriteAsync(h.Key("other3"), new byte[600 * KiB]);

        Assert.True(h.Cachelet.Contains(h.Key("in-use")));
        Assert.True(held.Span.SequenceEqual(content));
        Assert.False(third.Cached);
        Assert.True(third.Persisted);

        // An object that cannot get room is still served, from a private map.
        await h.UploadDirectAsync("late", new byte[600 * KiB]);
        using ObjectLease late = await h.Cachelet.ReadAsync(h.Key("late"));
        Assert.False(late.IsCached);
        Assert.True(h.Cachelet.Contains(h.Key("in-use")));
    }

    [Fact]
    public async Task A_replaced_version_stays_readable_until_its_lease_is_released()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Local);
        await h.Cachelet.WriteAsync(h.Key("v"), new byte[] { 1 });
        ObjectLease old = await h.Cachelet.ReadAsync(h.Key("v"));
        await h.Cachelet.WriteAsync(h.Key("v"), new byte[] { 2 });

        Assert.Equal(1, old.Span[0]);
        Assert.Equal(2, h.MapFiles().Length);
        old.Dispose();
        Assert.Single(h.MapFiles());
        using ObjectLease current = await h.Cachelet.ReadAsync(h.Key("v"));
        Assert.Equal(2, current.Span[0]);
    }

    [Fact]
    public async Task An_object_expires_after_its_ttl()
    {
        var time = new FakeTimeProvider(DateTimeOffset.UnixEpoch);
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.Eviction.Ttl = TimeSpan.FromMinutes(5); }, time: time);
        await h.UploadDirectAsync("t", [1]);
        (await h.Cachelet.ReadAsync(h.Key("t"))).Dispose();

        time.Advance(TimeSpan.FromMinutes(4));
        using (ObjectLease stillFresh = await h.Cachelet.ReadAsync(h.Key("t")))
        {
            Assert.Equal(ReadSource.LocalHit, stillFresh.Source);
        }

        time.Advance(TimeSpan.FromMinutes(2));
        using ObjectLease expired = await h.Cachelet.ReadAsync(h.Key("t"));
        Assert.Equal(ReadSource.LocalMiss, expired.Source);
        Assert.Single(h.MapFiles());
    }

    [Fact]
    public async Task Expired_objects_are_freed_in_the_background_without_being_read_again()
    {
        var time = new FakeTimeProvider(DateTimeOffset.UnixEpoch);
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.Eviction.Ttl = TimeSpan.FromMinutes(4); }, time: time);
        await h.UploadDirectAsync("t", new byte[1000]);
        (await h.Cachelet.ReadAsync(h.Key("t"))).Dispose();
        Assert.Single(h.MapFiles());

        // The sweep runs every minute (a quarter of the TTL); after 5 minutes the object is gone and its map deleted.
        time.Advance(TimeSpan.FromMinutes(5));

        Assert.False(h.Cachelet.Contains(h.Key("t")));
        Assert.Empty(h.MapFiles());
        Assert.Equal(0, h.Cachelet.BytesCached);
        Assert.Equal(1, h.Cachelet.Metrics.Snapshot().Evictions);
    }

    [Fact]
    public async Task Expired_objects_are_evicted_before_live_ones()
    {
        var time = new FakeTimeProvider(DateTimeOffset.UnixEpoch);
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.CapacityBytes = 1024 * KiB; o.Eviction.Ttl = TimeSpan.FromMinutes(1); }, time: time);
        await h.Cachelet.WriteAsync(h.Key("old"), new byte[300 * KiB]);
        time.Advance(TimeSpan.FromSeconds(50));
        await h.Cachelet.WriteAsync(h.Key("young"), new byte[300 * KiB]);
        (await h.Cachelet.ReadAsync(h.Key("old"))).Dispose();
        time.Advance(TimeSpan.FromSeconds(20));
        await h.Cachelet.WriteAsync(h.Key("new1"), new byte[300 * KiB]);
        await h.Cachelet.WriteAsync(h.Key("new2"), new byte[300 * KiB]);

        // "old" was used more recently than "young", but it has expired.
        Assert.False(h.Cachelet.Contains(h.Key("old")));
        Assert.True(h.Cachelet.Contains(h.Key("young")));
    }

    private static string KeyOwnedBy(CacheletHarness h, string member, string prefix)
    {
        for (int i = 0; ; i++)
        {
            string key = h.Key($"{prefix}-{i}");
            if (Owners.GetOwner(key) == member)
            {
                return key;
            }
        }
    }

    private static string[] Evicted(CacheletHarness h, Dictionary<string, string> keys)
        => keys.Where(kv => !h.Cachelet.Contains(kv.Value)).Select(kv => kv.Key).ToArray();
}
