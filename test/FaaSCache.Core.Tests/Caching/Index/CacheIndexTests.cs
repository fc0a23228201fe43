using FaaSCache.Caching.Index;
using FaaSCache.Options;

namespace FaaSCache.Core.Tests.Caching.Index;

[Trait("Category", "Unit")]
public sealed class CacheIndexTests
{
    private static readonly DateTimeOffset At = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    [Fact]
    public void Reserving_past_the_capacity_evicts_non_owned_objects_first_in_last_touch_order()
    {
        var index = new CacheIndex<string, Entry>(new EvictionOptions(), capacityBytes: 30);
        Add(index, "owned-old", 10, owned: true);
        Add(index, "peer-old", 10, owned: false);
        Add(index, "peer-new", 10, owned: false);
        index.Touch(index.TryGetValue("peer-old", out Entry? touched) ? touched : throw new InvalidOperationException());

        IReadOnlyList<Entry>? victims = index.TryReserve(15, At);

        Assert.Equal(["peer-new", "peer-old"], victims!.Select(v => v.Key));
        Assert.All(victims!, v => Assert.True(v.Detached));
        Assert.Equal(25, index.Bytes);
        Assert.Equal(2, index.Evictions);
        Assert.Equal(["owned-old"], index.Entries.Select(e => e.Key));
    }

    [Fact]
    public void A_reservation_that_only_pinned_objects_could_free_evicts_nothing()
    {
        var index = new CacheIndex<string, Entry>(new EvictionOptions(), capacityBytes: 20);
        Add(index, "in-use", 10, owned: false).IsPinned = true;
        Add(index, "free", 10, owned: false);

        Assert.Null(index.TryReserve(15, At));
        Assert.Null(index.TryReserve(21, At)); // larger than the capacity: never cached
        Assert.Equal(20, index.Bytes);
        Assert.Equal(2, index.Count);
        Assert.False(index.TryReserveFree(1));
    }

    [Fact]
    public void Expired_objects_go_first_and_an_unpersisted_one_never_expires()
    {
        var index = new CacheIndex<string, Entry>(new EvictionOptions { Ttl = TimeSpan.FromMinutes(1) }, capacityBytes: 30);
        Add(index, "old-owned", 10, owned: true, at: At);
        Entry dirty = Add(index, "dirty", 10, owned: true, at: At);
        dirty.Persisted = false;
        Add(index, "young-peer", 10, owned: false, at: At.AddMinutes(1));

        DateTimeOffset later = At.AddSeconds(90);
        Assert.Equal(["old-owned"], index.Expired(later).Select(e => e.Key));
        Assert.Equal("old-owned", index.TryReserve(5, later)!.Single().Key);
    }

    [Fact]
    public void Inserting_a_key_again_returns_the_replaced_entry_and_counts_its_bytes_once()
    {
        var index = new CacheIndex<string, Entry>(new EvictionOptions(), capacityBytes: 100);
        Entry first = Add(index, "k", 10, owned: true);
        Assert.NotNull(index.TryReserve(20, At));

        Entry? replaced = index.Insert(new Entry("k", 20, owned: true), At);

        Assert.Same(first, replaced);
        Assert.True(first.Detached);
        Assert.Equal(20, index.Bytes);
        Assert.False(index.Detach(first));
    }

    [Fact]
    public void A_ring_change_moves_entries_to_their_new_lists_in_last_touch_order()
    {
        var index = new CacheIndex<string, Entry>(new EvictionOptions(), capacityBytes: 30);
        Add(index, "a", 10, owned: true);
        Add(index, "b", 10, owned: false);
        Add(index, "c", 10, owned: true);

        Assert.Equal(3, index.Reown(e => e.Key == "b"));

        // Now a and c are not owned (evicted first, a before c), b is owned.
        Assert.Equal(["a", "c", "b"], index.VictimOrder(At).Select(e => e.Key));
        Assert.Equal(0, index.Reown(e => e.Key == "b"));
    }

    private static Entry Add(CacheIndex<string, Entry> index, string key, long size, bool owned, DateTimeOffset? at = null)
    {
        Assert.NotNull(index.TryReserve(size, at ?? At));
        var entry = new Entry(key, size, owned);
        index.Insert(entry, at ?? At);
        return entry;
    }

    private sealed class Entry(string key, long size, bool owned) : IndexedEntry<string, Entry>(key, owned, large: false)
    {
        public override long Size { get; } = size;

        public bool IsPinned { get; set; }

        public bool Persisted { get; set; } = true;

        public override bool Pinned => IsPinned || !Persisted;

        public override bool CanExpire => Persisted;
    }
}
