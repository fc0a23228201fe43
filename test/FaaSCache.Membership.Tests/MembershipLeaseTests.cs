namespace FaaSCache.Membership.Tests;

/// <summary>
/// The membership lease a cachelet trusts its ownership by: lost when no heartbeat landed in time (the others may have
/// removed this member and moved its keys), held again after the next heartbeat; lost and held again on a rejoin.
/// </summary>
[Trait("Category", "Integration")]
public sealed class MembershipLeaseTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task A_member_whose_storage_stops_answering_loses_its_lease_and_holds_it_again_after_the_next_heartbeat()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromMilliseconds(200), TimeSpan.FromSeconds(1));
        var changes = new ConcurrentQueue<bool>();
        a.Owners.LeaseChanged += (_, e) => changes.Enqueue(e.Held);
        await a.StartAsync(CancellationToken.None);
        Assert.True(a.Owners.HoldsLease);

        // Storage frozen: heartbeats hang, so none lands within the lease (3/4 of the failure timeout).
        ProcessSignals.Send(azurite.Server.ProcessId, ProcessSignals.Stop);
        try
        {
            await MembershipTestBed.WaitUntilAsync(() => !a.Owners.HoldsLease, "a to lose its lease");
        }
        finally
        {
            ProcessSignals.Send(azurite.Server.ProcessId, ProcessSignals.Continue);
        }

        await MembershipTestBed.WaitUntilAsync(() => a.Owners.HoldsLease, "a to hold its lease again");
        Assert.Equal([false, true], changes.Take(2));
    }

    [Fact]
    public async Task A_member_removed_while_alive_tells_its_ring_it_lost_the_lease_and_holds_it_again_once_it_rejoined()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var a = bed.NewDaemon("a", TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(90), watchInterval: TimeSpan.FromMilliseconds(200));
        var changes = new ConcurrentQueue<bool>();
        a.Owners.LeaseChanged += (_, e) => changes.Enqueue(e.Held);
        await a.StartAsync(CancellationToken.None);
        Assert.Empty(changes);

        // Another member removed it (its heartbeat looked too old to them): writes may have gone to a new owner meanwhile.
        await bed.NewStore().UpdateAsync(list => list.WithoutMember("a"));
        await MembershipTestBed.WaitUntilAsync(() => changes.Count >= 2, "a to rejoin");

        Assert.Equal([false, true], changes);
        Assert.True(a.Owners.HoldsLease);
    }
}
