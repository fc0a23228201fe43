using FaaSCache.Caching.Policies;

namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class EvictionRulesTests
{
    // Entries are (name, last touch); lists are least recently used first.
    private static readonly LinkedList<(string Name, long Touch)> NotOwnedSmall = new([("nS1", 1), ("nS5", 5)]);
    private static readonly LinkedList<(string Name, long Touch)> NotOwnedLarge = new([("nL2", 2)]);
    private static readonly LinkedList<(string Name, long Touch)> OwnedSmall = new([("oS3", 3)]);
    private static readonly LinkedList<(string Name, long Touch)> OwnedLarge = new([("oL0", 0), ("oL4", 4)]);

    [Fact]
    public void LRU_takes_non_owned_objects_first_in_last_touch_order()
    {
        Assert.Equal(["nS1", "nL2", "nS5", "oL0", "oS3", "oL4"], Order(EvictionPolicy.Lru));
    }

    [Fact]
    public void Size_takes_non_owned_large_then_non_owned_small_then_owned_large_then_owned_small()
    {
        Assert.Equal(["nL2", "nS1", "nS5", "oL0", "oL4", "oS3"], Order(EvictionPolicy.Size));
    }

    [Fact]
    public void Admission_largeness_and_expiry_follow_the_options()
    {
        var options = new EvictionOptions { SizeThresholdBytes = 100, Ttl = TimeSpan.FromMinutes(1) };
        var at = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

        Assert.True(EvictionRules.Admits(10, 10));
        Assert.False(EvictionRules.Admits(11, 10));
        Assert.False(EvictionRules.IsLarge(options, 100));
        Assert.True(EvictionRules.IsLarge(options, 101));
        Assert.Equal(at.AddMinutes(1), EvictionRules.ExpiresAt(options, at));
        Assert.Null(EvictionRules.ExpiresAt(new EvictionOptions(), at));
        Assert.False(EvictionRules.IsExpired(at.AddMinutes(1), at));
        Assert.True(EvictionRules.IsExpired(at.AddMinutes(1), at.AddMinutes(1)));
        Assert.False(EvictionRules.IsExpired(null, at));
    }

    private static string[] Order(EvictionPolicy policy)
        => [.. EvictionRules.PolicyOrder(new EvictionOptions { Policy = policy }, NotOwnedSmall, NotOwnedLarge, OwnedSmall, OwnedLarge, e => e.Touch).Select(e => e.Name)];
}
