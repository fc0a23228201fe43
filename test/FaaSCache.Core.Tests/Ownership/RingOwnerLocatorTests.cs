namespace FaaSCache.Core.Tests.Ownership;

[Trait("Category", "Unit")]
public sealed class RingOwnerLocatorTests
{
    [Fact]
    public void Self_id_is_the_one_given_to_the_constructor()
    {
        var locator = new RingOwnerLocator("me", ["me", "you"]);

        Assert.Equal("me", locator.SelfId);
    }

    [Fact]
    public void An_empty_self_id_is_rejected()
    {
        Assert.ThrowsAny<ArgumentException>(() => new RingOwnerLocator("", ["a"]));
    }

    [Fact]
    public void Get_owner_answers_from_the_current_ring()
    {
        var locator = new RingOwnerLocator("a", ["a", "b", "c"], virtualNodes: 20);

        for (int i = 0; i < 1_000; i++)
        {
            string key = Key(i);
            Assert.Equal(locator.Current.GetOwner(key), locator.GetOwner(key));
            Assert.Equal(
                string.Equals(locator.GetOwner(key), "a", StringComparison.Ordinal),
                locator.IsLocalOwner(key));
        }
    }

    [Fact]
    public void Update_swaps_in_a_new_ring_and_keeps_the_virtual_node_count()
    {
        var locator = new RingOwnerLocator("a", ["a"], virtualNodes: 7);
        var first = locator.Current;

        Assert.True(locator.Update(["a", "b"]));

        Assert.NotSame(first, locator.Current);
        Assert.Equal(["a"], first.Members);
        Assert.Equal(["a", "b"], locator.Current.Members);
        Assert.Equal(7, locator.Current.VirtualNodes);
    }

    [Fact]
    public void Update_raises_ring_changed_with_the_old_and_new_rings_and_who_came_and_went()
    {
        var locator = new RingOwnerLocator("a", ["a", "b", "c"]);
        var original = locator.Current;
        var events = new List<RingChangedEventArgs>();
        locator.RingChanged += (sender, e) =>
        {
            Assert.Same(locator, sender);
            Assert.Same(e.Current, locator.Current);
            events.Add(e);
        };

        locator.Update(["d", "a", "c"]);

        var change = Assert.Single(events);
        Assert.Same(original, change.Previous);
        Assert.Same(locator.Current, change.Current);
        Assert.Equal(["d"], change.Added);
        Assert.Equal(["b"], change.Removed);
    }

    [Fact]
    public void Update_with_the_same_members_in_any_order_changes_nothing()
    {
        var locator = new RingOwnerLocator("a", ["a", "b", "c"]);
        var original = locator.Current;
        int raised = 0;
        locator.RingChanged += (_, _) => raised++;

        Assert.False(locator.Update(["c", "a", "b", "a"]));

        Assert.Same(original, locator.Current);
        Assert.Equal(0, raised);
    }

    [Fact]
    public void An_empty_ring_throws_until_an_update_adds_members()
    {
        var locator = new RingOwnerLocator("a", []);

        Assert.Throws<InvalidOperationException>(() => locator.GetOwner("k"));

        locator.Update(["a"]);

        Assert.Equal("a", locator.GetOwner("k"));
    }

    [Fact]
    public void Concurrent_readers_during_repeated_updates_always_see_a_member_of_the_old_or_the_new_set()
    {
        string[] oldSet = ["old-1", "old-2", "old-3"];
        string[] newSet = ["new-1", "new-2", "new-3", "new-4"];
        const int updates = 2_000;
        const int readers = 4;
        const int readsPerReader = 20_000;

        var locator = new RingOwnerLocator("old-1", oldSet, virtualNodes: 10);
        int raised = 0;
        locator.RingChanged += (_, _) => Interlocked.Increment(ref raised);
        var failures = new ConcurrentQueue<string>();
        using var start = new Barrier(readers + 1);

        var threads = new List<Thread>
        {
            new(() =>
            {
                start.SignalAndWait();
                for (int i = 0; i < updates; i++)
                {
                    locator.Update(i % 2 == 0 ? newSet : oldSet);
                }
            }),
        };
        for (int r = 0; r < readers; r++)
        {
            threads.Add(new Thread(() =>
            {
                start.SignalAndWait();
                for (int i = 0; i < readsPerReader; i++)
                {
                    string key = Key(i);
                    try
                    {
                        string owner = locator.GetOwner(key);
                        if (!oldSet.Contains(owner) && !newSet.Contains(owner))
                        {
                            failures.Enqueue($"owner {owner} is in neither set");
                        }

                        // A snapshot is wholly one set or the other, and answers from it.
                        var snapshot = locator.Current;
                        string[] set = snapshot.Members.Contains(oldSet[0]) ? oldSet : newSet;
                        if (!snapshot.Members.SequenceEqual(set)
                            || !snapshot.GetOwners(key, 3).All(set.Contains))
                        {
                            failures.Enqueue($"torn ring: {string.Join(",", snapshot.Members)}");
                        }
                    }
                    catch (Exception ex)
                    {
                        failures.Enqueue(ex.ToString());
                    }
                }
            }));
        }

        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());

        Assert.Empty(failures);
        Assert.Equal(updates, raised);
        Assert.Equal(oldSet, locator.Current.Members);
    }

    private static string Key(int i) => "key-" + i.ToString(CultureInfo.InvariantCulture);
}
