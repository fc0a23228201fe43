using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Membership.Tests;

[Trait("Category", "Integration")]
public sealed class MembershipDaemonTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task A_daemon_joins_the_list_at_start_and_leaves_it_at_stop()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var daemon = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));

        await daemon.StartAsync(CancellationToken.None);
        var joined = await bed.ReadListAsync();
        await daemon.StopAsync(CancellationToken.None);
        var left = await bed.ReadListAsync();

        var entry = Assert.Single(joined.Members);
        Assert.Equal("a", entry.Id);
        Assert.Equal(MembershipTestBed.EndpointOf("a"), entry.Endpoint);
        Assert.Equal("membership", entry.Metadata!["test"]);
        Assert.InRange(DateTimeOffset.UtcNow - entry.LastHeartbeat, TimeSpan.FromSeconds(-1), TimeSpan.FromSeconds(10));
        Assert.True(entry.StartedAt <= entry.LastHeartbeat);
        Assert.Empty(left.Members);
        Assert.False(daemon.IsRunning);
    }

    [Fact]
    public async Task A_running_daemon_knows_the_members_their_endpoints_and_the_ring()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        var b = bed.NewDaemon("b", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));

        await a.StartAsync(CancellationToken.None);
        await b.StartAsync(CancellationToken.None);

        Assert.True(b.IsRunning);
        Assert.Equal(["a", "b"], b.Members.Select(m => m.Id));
        Assert.Equal(["a", "b"], b.Owners.Current.Members);
        Assert.Equal(100, b.Owners.Current.VirtualNodes);
        Assert.True(b.TryGetEndpoint("a", out var endpointOfA));
        Assert.Equal(MembershipTestBed.EndpointOf("a"), endpointOfA);
        Assert.False(b.TryGetEndpoint("nobody", out _));
    }

    [Fact]
    public async Task The_newcomers_ring_change_has_the_ring_without_itself_as_previous()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15), watchInterval: TimeSpan.FromMilliseconds(200));
        var b = bed.NewDaemon("b", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        await a.StartAsync(CancellationToken.None);
        await b.StartAsync(CancellationToken.None);
        await MembershipTestBed.WaitUntilAsync(() => a.Owners.Current.Contains("b"), "a's ring to include b");
        string[] keys = [.. Enumerable.Range(0, 200).Select(i => $"photos/{i}.jpg")];
        string[] ownersBeforeC = [.. keys.Select(a.Owners.GetOwner)];
        var c = bed.NewDaemon("c", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        var changes = new List<RingChangedEventArgs>();
        c.Owners.RingChanged += (_, e) => changes.Add(e);

        await c.StartAsync(CancellationToken.None);

        var join = Assert.Single(changes, e => e.Added.Contains("c"));
        Assert.Same(join, changes[^1]);
        Assert.Equal(["a", "b"], join.Previous.Members);
        Assert.Equal(["a", "b", "c"], join.Current.Members);
        Assert.Equal(["c"], join.Added);

        // The previous ring is the one a and b were using, so it names the old owner of every key that moved to c.
        Assert.Equal(ownersBeforeC, keys.Select(join.Previous.GetOwner));
        Assert.Contains(keys, k => join.Current.GetOwner(k) == "c");
    }

    [Fact]
    public async Task Between_heartbeats_a_cheap_change_check_brings_a_join_and_a_leave_to_the_ring_within_a_second_or_so()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var heartbeat = TimeSpan.FromSeconds(30);
        var a = bed.NewDaemon("a", heartbeat, TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        var b = bed.NewDaemon("b", heartbeat, TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        var membersChanged = new ConcurrentQueue<MembersChangedEventArgs>();
        a.MembersChanged += (_, e) => membersChanged.Enqueue(e);
        await a.StartAsync(CancellationToken.None);

        await b.StartAsync(CancellationToken.None);
        var sawJoin = await MembershipTestBed.WaitUntilAsync(() => a.Owners.Current.Contains("b"), "a's ring to include b");
        await b.StopAsync(CancellationToken.None);
        var sawLeave = await MembershipTestBed.WaitUntilAsync(() => !a.Owners.Current.Contains("b"), "a's ring to drop b");

        output.WriteLine($"join seen after {sawJoin.TotalMilliseconds:0} ms, leave after {sawLeave.TotalMilliseconds:0} ms (heartbeat {heartbeat})");
        Assert.True(sawJoin < TimeSpan.FromSeconds(5), $"join took {sawJoin}");
        Assert.True(sawLeave < TimeSpan.FromSeconds(5), $"leave took {sawLeave}");
        Assert.Contains(membersChanged, e => e.Joined.Any(m => m.Id == "b") && e.Current.Count == 2);
        Assert.Contains(membersChanged, e => e.Left.Any(m => m.Id == "b") && e.Current.Count == 1);
        Assert.False(a.TryGetEndpoint("b", out _));
    }

    [Fact]
    public async Task Twenty_daemons_starting_at_once_all_appear_in_the_list_and_every_ring_converges_to_the_same_twenty()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        // Twenty writers of one blob on a shared 2-core machine: a CAS round can take long enough under load that a 10 s
        // failure timeout removed live members (seen in CI). This test is about joining at once, not failure detection,
        // so the failure timeout is generous.
        var heartbeat = TimeSpan.FromSeconds(2);
        var ids = Enumerable.Range(0, 20).Select(i => $"instance-{i:00}").ToArray();
        var daemons = ids.Select(id => bed.NewDaemon(id, heartbeat, TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(500))).ToArray();

        var clock = Stopwatch.StartNew();
        await Task.WhenAll(daemons.Select(d => Task.Run(() => d.StartAsync(CancellationToken.None))));
        output.WriteLine($"20 joins took {clock.ElapsedMilliseconds} ms");

        Assert.Equal(ids, (await bed.ReadListAsync()).Ids);
        await MembershipTestBed.WaitUntilAsync(
            () => daemons.All(d => d.Owners.Current.HasSameMembers(ids) && d.Members.Count == 20),
            "every daemon's ring to hold all 20 members");
        foreach (string key in Enumerable.Range(0, 100).Select(i => string.Create(CultureInfo.InvariantCulture, $"images/{i}.png")))
        {
            Assert.Single(daemons.Select(d => d.Owners.GetOwner(key)).Distinct());
        }

        // Leaving at once is as safe as joining at once.
        await Task.WhenAll(daemons.Select(d => Task.Run(() => d.StopAsync(CancellationToken.None))));
        Assert.Empty((await bed.ReadListAsync()).Members);
    }

    [Fact]
    public async Task A_member_that_stops_heartbeating_is_removed_by_the_others_within_the_failure_timeout_and_its_keys_get_new_owners()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var heartbeat = TimeSpan.FromMilliseconds(200);
        var failureTimeout = TimeSpan.FromSeconds(1);
        var a = bed.NewDaemon("a", heartbeat, failureTimeout, watchInterval: TimeSpan.FromMilliseconds(100));
        var b = bed.NewDaemon("b", heartbeat, failureTimeout, watchInterval: TimeSpan.FromMilliseconds(100));
        var c = bed.NewDaemon("c", heartbeat, failureTimeout, watchInterval: TimeSpan.FromMilliseconds(100));
        foreach (var d in new[] { a, b, c })
        {
            await d.StartAsync(CancellationToken.None);
        }

        await MembershipTestBed.WaitUntilAsync(() => a.Owners.Current.Members.Count == 3 && b.Owners.Current.Members.Count == 3, "a and b to see c");
        string[] keysOfC = [.. Enumerable.Range(0, 500).Select(i => $"photos/{i}.jpg").Where(k => a.Owners.GetOwner(k) == "c")];
        Assert.NotEmpty(keysOfC);

        // A crash: no leave, no more heartbeats.
        var lastHeartbeatOfC = (await bed.ReadListAsync()).Find("c")!.LastHeartbeat;
        await c.DisposeAsync();
        var crashedAt = DateTimeOffset.UtcNow;
        var removedAfter = await MembershipTestBed.WaitUntilAsync(
            async () => !(await bed.ReadListAsync()).Contains("c"),
            "c to be removed from the list");

        output.WriteLine($"c's last heartbeat was {(crashedAt - lastHeartbeatOfC).TotalMilliseconds:0} ms before the crash; removed {removedAfter.TotalMilliseconds:0} ms after it");
        Assert.True(
            removedAfter <= failureTimeout + heartbeat + TimeSpan.FromSeconds(1.5),
            $"c was removed {removedAfter} after the crash; failureTimeout is {failureTimeout}");
        Assert.True(
            removedAfter >= failureTimeout - (crashedAt - lastHeartbeatOfC) - TimeSpan.FromMilliseconds(100),
            $"c was removed {removedAfter} after the crash, before its heartbeat was {failureTimeout} old");

        await MembershipTestBed.WaitUntilAsync(
            () => a.Owners.Current.HasSameMembers(["a", "b"]) && b.Owners.Current.HasSameMembers(["a", "b"]),
            "a's and b's rings to drop c");
        Assert.All(keysOfC, key =>
        {
            Assert.Contains(a.Owners.GetOwner(key), new[] { "a", "b" });
            Assert.Equal(a.Owners.GetOwner(key), b.Owners.GetOwner(key));
        });
        Assert.False(a.TryGetEndpoint("c", out _));
        Assert.Equal(["a", "b"], (await bed.ReadListAsync()).Ids);
    }

    [Fact]
    public async Task A_member_removed_from_the_list_while_alive_rejoins_without_waiting_for_its_heartbeat()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        await a.StartAsync(CancellationToken.None);

        await bed.NewStore().UpdateAsync(list => list.WithoutMember("a"));
        var back = await MembershipTestBed.WaitUntilAsync(async () => (await bed.ReadListAsync()).Contains("a"), "a to rejoin");

        output.WriteLine($"rejoined after {back.TotalMilliseconds:0} ms");
        Assert.True(back < TimeSpan.FromSeconds(5));
        Assert.Equal(["a"], a.Owners.Current.Members);
    }

    [Fact]
    public async Task A_deleted_membership_blob_is_written_again_by_the_running_members()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        var b = bed.NewDaemon("b", TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        await a.StartAsync(CancellationToken.None);
        await b.StartAsync(CancellationToken.None);

        await bed.Blob.DeleteAsync();

        await MembershipTestBed.WaitUntilAsync(async () => (await bed.ReadListAsync()).Ids.SequenceEqual(["a", "b"]), "a and b to write the list again");

        // Whoever re-creates the blob first lists only itself for a moment; the other's rejoin reaches it at its next watch.
        await MembershipTestBed.WaitUntilAsync(
            () => a.Owners.Current.HasSameMembers(["a", "b"]) && b.Owners.Current.HasSameMembers(["a", "b"]),
            "both rings to hold a and b again");
    }

    [Fact]
    public async Task A_restart_with_the_same_id_replaces_the_old_entry_instead_of_adding_a_second_one()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var before = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15), endpoint: new Uri("http://127.0.0.1:7001/"));
        await before.StartAsync(CancellationToken.None);
        await before.DisposeAsync();

        var after = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15), endpoint: new Uri("http://127.0.0.1:7002/"));
        await after.StartAsync(CancellationToken.None);

        var entry = Assert.Single((await bed.ReadListAsync()).Members);
        Assert.Equal(new Uri("http://127.0.0.1:7002/"), entry.Endpoint);
        Assert.True(after.TryGetEndpoint("a", out var endpoint));
        Assert.Equal(new Uri("http://127.0.0.1:7002/"), endpoint);
    }

    [Fact]
    public async Task Members_whose_heartbeat_is_already_too_old_at_start_are_neither_on_the_ring_nor_kept_in_the_list()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var longAgo = DateTimeOffset.UtcNow.AddMinutes(-10);
        await bed.NewStore().UpdateAsync(list => list.WithMember(new MemberInfo("ghost", MembershipTestBed.EndpointOf("ghost"), longAgo, longAgo)));
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        var changes = new List<RingChangedEventArgs>();
        a.Owners.RingChanged += (_, e) => changes.Add(e);

        await a.StartAsync(CancellationToken.None);

        Assert.Empty(changes);
        Assert.Equal(["a"], a.Owners.Current.Members);
        Assert.Equal(["a"], (await bed.ReadListAsync()).Ids);
    }

    [Fact]
    public async Task A_malformed_membership_blob_stops_start_with_an_error_naming_the_blob()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        await bed.NewContainerClient().CreateAsync();
        await bed.Blob.UploadAsync(BinaryData.FromString("this is not json"));
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));

        var e = await Assert.ThrowsAsync<MembershipFormatException>(() => a.StartAsync(CancellationToken.None));

        Assert.Contains($"'{bed.ContainerName}/orders-app.json'", e.Message, StringComparison.Ordinal);
        Assert.False(a.IsRunning);
    }

    [Fact]
    public async Task Stopping_the_last_member_leaves_its_ring_usable_and_an_empty_list()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15));
        await a.StartAsync(CancellationToken.None);

        await a.StopAsync(CancellationToken.None);

        Assert.Equal("a", a.Owners.GetOwner("any/key"));
        Assert.Empty((await bed.ReadListAsync()).Members);
        await Assert.ThrowsAsync<InvalidOperationException>(() => a.StartAsync(CancellationToken.None));
    }

    [Fact]
    public async Task As_a_hosted_service_the_daemon_joins_when_the_host_starts_and_leaves_when_it_stops()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var builder = Microsoft.Extensions.Hosting.Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(_ => bed.NewDaemon("hosted", TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(15)));
        builder.Services.AddSingleton<IPeerDirectory>(sp => sp.GetRequiredService<MembershipDaemon>());
        builder.Services.AddHostedService(sp => sp.GetRequiredService<MembershipDaemon>());
        using var host = builder.Build();

        await host.StartAsync();
        var whileRunning = await bed.ReadListAsync();
        var directory = host.Services.GetRequiredService<IPeerDirectory>();
        await host.StopAsync();

        Assert.Equal(["hosted"], whileRunning.Ids);
        Assert.True(directory.TryGetEndpoint("hosted", out _));
        Assert.Empty((await bed.ReadListAsync()).Members);
    }
}
