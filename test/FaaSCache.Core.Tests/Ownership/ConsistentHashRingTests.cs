using System.Buffers.Binary;

namespace FaaSCache.Core.Tests.Ownership;

[Trait("Category", "Unit")]
public sealed class ConsistentHashRingTests
{
    private const int KeyCount = 100_000;

    private static readonly string[] Keys =
        [.. Enumerable.Range(0, KeyCount).Select(i => "key-" + i.ToString(CultureInfo.InvariantCulture))];

    [Theory]
    [InlineData(3)]
    [InlineData(5)]
    [InlineData(10)]
    [InlineData(20)]
    public void No_member_owns_more_than_1_point_3_x_its_share_with_100_virtual_nodes(int memberCount)
    {
        var ring = new ConsistentHashRing(MemberIds(memberCount), virtualNodes: 100);

        var owned = CountByOwner(ring);

        double fairShare = (double)KeyCount / memberCount;
        Assert.Equal(memberCount, owned.Count);
        foreach (var (member, count) in owned)
        {
            Assert.True(
                count <= 1.3 * fairShare,
                $"{member} owns {count} of {KeyCount} keys, more than 1.3 x {fairShare:F0}");
        }
    }

    [Theory]
    [InlineData(3)]
    [InlineData(5)]
    [InlineData(10)]
    [InlineData(20)]
    public void On_join_only_keys_that_move_to_the_new_member_move_and_fewer_than_twice_its_fair_share_move(int memberCount)
    {
        var before = new ConsistentHashRing(MemberIds(memberCount));
        const string joiner = "cachelet-joiner";
        var after = before.WithMember(joiner);

        int moved = 0;
        foreach (var key in Keys)
        {
            string oldOwner = before.GetOwner(key);
            string newOwner = after.GetOwner(key);
            if (!string.Equals(oldOwner, newOwner, StringComparison.Ordinal))
            {
                Assert.Equal(joiner, newOwner);
                moved++;
            }
        }

        double movedFraction = (double)moved / KeyCount;
        Assert.True(moved > 0, "the new member took no keys");
        Assert.True(
            movedFraction < 2.0 / (memberCount + 1),
            $"{movedFraction:P1} of keys moved; expected about {1.0 / (memberCount + 1):P1}");
    }

    [Theory]
    [InlineData(3)]
    [InlineData(5)]
    [InlineData(10)]
    [InlineData(20)]
    public void On_leave_only_the_leavers_keys_move(int memberCount)
    {
        var before = new ConsistentHashRing(MemberIds(memberCount));
        string leaver = before.Members[memberCount / 2];
        var after = before.WithoutMember(leaver);

        foreach (var key in Keys)
        {
            string oldOwner = before.GetOwner(key);
            string newOwner = after.GetOwner(key);
            if (string.Equals(oldOwner, leaver, StringComparison.Ordinal))
            {
                Assert.NotEqual(leaver, newOwner);
            }
            else
            {
                Assert.Equal(oldOwner, newOwner);
            }
        }
    }

    [Fact]
    public void Rings_with_the_same_members_in_different_order_agree_on_every_key()
    {
        string[] ids = MemberIds(10);
        var forward = new ConsistentHashRing(ids);
        var shuffled = new ConsistentHashRing(ids.Reverse().Concat(ids.Take(3)));

        Assert.Equal(forward.Members, shuffled.Members);
        foreach (var key in Keys)
        {
            Assert.Equal(forward.GetOwner(key), shuffled.GetOwner(key));
        }
    }

    [Fact]
    public void Members_are_distinct_and_in_ordinal_order()
    {
        var ring = new ConsistentHashRing(["b", "a", "B", "b", "c"]);

        Assert.Equal(["B", "a", "b", "c"], ring.Members);
    }

    [Fact]
    public void Each_member_gets_virtual_nodes_points()
    {
        var ring = new ConsistentHashRing(MemberIds(4), virtualNodes: 7);

        Assert.Equal(7, ring.VirtualNodes);
        Assert.Equal(28, ring.PointCount);
    }

    [Fact]
    public void The_default_is_100_virtual_nodes()
    {
        var ring = new ConsistentHashRing(["a"]);

        Assert.Equal(100, ring.VirtualNodes);
        Assert.Equal(100, ring.PointCount);
    }

    [Fact]
    public void A_single_member_owns_every_key()
    {
        var ring = new ConsistentHashRing(["only"]);

        Assert.All(Keys.Take(10_000), key => Assert.Equal("only", ring.GetOwner(key)));
    }

    [Fact]
    public void The_owner_is_the_first_point_clockwise_from_the_keys_sha_256()
    {
        string[] ids = ["alpha", "beta", "gamma", "δέλτα"];
        const int virtualNodes = 5;
        var ring = new ConsistentHashRing(ids, virtualNodes);

        // Reference: brute force over every point, computed independently from the spec.
        var points = ids
            .SelectMany(id => Enumerable.Range(0, virtualNodes)
                .Select(i => (Point: Sha256Prefix(id + "#" + i.ToString(CultureInfo.InvariantCulture)), Id: id)))
            .ToList();
        ulong lowest = points.Min(p => p.Point);

        string[] keys =
        [
            .. Keys.Take(2_000),
            string.Empty,
            "ключ-🔑",
            new string('x', 1_000),
            string.Concat(Enumerable.Repeat("é🔑", 300)),
        ];
        foreach (var key in keys)
        {
            ulong hash = Sha256Prefix(key);
            var atOrAfter = points.Where(p => p.Point >= hash).ToList();
            string expected = atOrAfter.Count > 0
                ? atOrAfter.MinBy(p => p.Point).Id
                : points.First(p => p.Point == lowest).Id;

            Assert.Equal(expected, ring.GetOwner(key));
        }
    }

    [Fact]
    public void Colliding_points_go_to_the_member_whose_id_sorts_first()
    {
        // Every member gets the same points, so every point collides.
        static ulong[] SamePoints(string id, int count) => [.. Enumerable.Range(1, count).Select(i => (ulong)i << 60)];

        var ring = new ConsistentHashRing(["zulu", "mike", "alpha", "kilo"], 3, SamePoints);
        var reordered = new ConsistentHashRing(["kilo", "alpha", "zulu", "mike"], 3, SamePoints);

        Assert.Equal(3, ring.PointCount);
        Assert.All(Keys.Take(1_000), key =>
        {
            Assert.Equal("alpha", ring.GetOwner(key));
            Assert.Equal("alpha", reordered.GetOwner(key));
        });
    }

    [Fact]
    public void An_empty_ring_refuses_to_name_an_owner()
    {
        var ring = new ConsistentHashRing([]);

        var ex = Assert.Throws<InvalidOperationException>(() => ring.GetOwner("k"));
        Assert.Contains("no members", ex.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => ring.GetOwners("k", 2));
        Assert.True(ring.IsEmpty);
        Assert.True(ConsistentHashRing.Empty.IsEmpty);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    public void Virtual_nodes_below_one_are_rejected_naming_the_parameter(int virtualNodes)
    {
        var ex = Assert.ThrowsAny<ArgumentException>(() => new ConsistentHashRing(["a"], virtualNodes));

        Assert.Equal("virtualNodes", ex.ParamName);
    }

    [Fact]
    public void Null_or_empty_member_ids_are_rejected()
    {
        Assert.Equal("members", Assert.Throws<ArgumentException>(() => new ConsistentHashRing(["a", ""])).ParamName);
        Assert.Equal("members", Assert.Throws<ArgumentException>(() => new ConsistentHashRing(["a", null!])).ParamName);
    }

    [Fact]
    public void Get_owners_returns_distinct_successors_starting_with_the_owner()
    {
        var ring = new ConsistentHashRing(MemberIds(5));

        foreach (var key in Keys.Take(1_000))
        {
            var owners = ring.GetOwners(key, 3);

            Assert.Equal(3, owners.Count);
            Assert.Equal(ring.GetOwner(key), owners[0]);
            Assert.Equal(3, owners.Distinct(StringComparer.Ordinal).Count());
            Assert.All(owners, o => Assert.Contains(o, ring.Members));
        }
    }

    [Fact]
    public void Get_owners_is_capped_at_the_member_count()
    {
        var ring = new ConsistentHashRing(MemberIds(3));

        var owners = ring.GetOwners("k", 10);

        Assert.Equal(ring.Members, owners.Order(StringComparer.Ordinal));
        Assert.Empty(ring.GetOwners("k", 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => ring.GetOwners("k", -1));
    }

    [Fact]
    public void The_second_owner_is_the_owner_once_the_first_owner_leaves()
    {
        var ring = new ConsistentHashRing(MemberIds(6));

        foreach (var key in Keys.Take(1_000))
        {
            var owners = ring.GetOwners(key, 2);
            Assert.Equal(owners[1], ring.WithoutMember(owners[0]).GetOwner(key));
        }
    }

    [Fact]
    public void With_member_and_without_member_return_new_rings_and_leave_the_original_alone()
    {
        var ring = new ConsistentHashRing(["a", "b"], virtualNodes: 10);

        var grown = ring.WithMember("c");
        var shrunk = ring.WithoutMember("a");

        Assert.Equal(["a", "b"], ring.Members);
        Assert.Equal(["a", "b", "c"], grown.Members);
        Assert.Equal(["b"], shrunk.Members);
        Assert.Equal(10, grown.VirtualNodes);
        Assert.Equal(10, shrunk.VirtualNodes);
        Assert.Same(ring, ring.WithMember("a"));
        Assert.Same(ring, ring.WithoutMember("z"));
    }

    [Fact]
    public void Look_ups_do_not_allocate()
    {
        var ring = new ConsistentHashRing(MemberIds(10));
        string shortKey = "user/42/profile";
        string longKey = new('k', 4_000);
        ring.GetOwner(shortKey);
        ring.GetOwner(longKey);

        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1_000; i++)
        {
            ring.GetOwner(shortKey);
            ring.GetOwner(longKey);
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(0, allocated);
    }

    private static string[] MemberIds(int count)
        => [.. Enumerable.Range(0, count).Select(i => "cachelet-" + i.ToString("D2", CultureInfo.InvariantCulture))];

    private static Dictionary<string, int> CountByOwner(ConsistentHashRing ring)
    {
        var counts = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (var key in Keys)
        {
            string owner = ring.GetOwner(key);
            counts[owner] = counts.GetValueOrDefault(owner) + 1;
        }

        return counts;
    }

    private static ulong Sha256Prefix(string text)
        => BinaryPrimitives.ReadUInt64BigEndian(SHA256.HashData(Encoding.UTF8.GetBytes(text)));
}
