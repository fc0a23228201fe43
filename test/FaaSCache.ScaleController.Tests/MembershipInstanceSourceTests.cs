using FaaSCache.Membership;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.ScaleController.Tests;

/// <summary>Membership mode's instance source against a real membership blob in Azurite, written with the daemon's own store.</summary>
[Trait("Category", "Integration")]
public sealed class MembershipInstanceSourceTests(AzuriteFixture azurite) : AzuriteTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 12, 0, 0, TimeSpan.Zero));

    [Fact]
    public async Task Members_that_appear_are_added_and_members_that_leave_end()
    {
        (MembershipStore store, MembershipInstanceSource source) = await CreateAsync();
        await store.UpdateAsync(l => l.WithMember(Member("app-1", 5001)).WithMember(Member("app-2", 5002)));

        await source.RefreshAsync(CancellationToken.None);
        Assert.Equal(["app-1", "app-2"], source.Ready().Select(i => i.Id).Order(StringComparer.Ordinal));
        Assert.Equal(new Uri("http://10.0.0.1:5002/"), source.Ready().Single(i => i.Id == "app-2").PeerEndpoint);
        Assert.All(source.Ready(), i => Assert.Equal(InstanceState.Ready, i.State));

        await store.UpdateAsync(l => l.WithoutMember("app-1").WithMember(Member("app-3", 5003)));
        await source.RefreshAsync(CancellationToken.None);

        Assert.Equal(["app-2", "app-3"], source.Ready().Select(i => i.Id).Order(StringComparer.Ordinal));
        ManagedInstance gone = Assert.Single(source.Snapshot(), i => i.Id == "app-1");
        Assert.Equal(InstanceState.Stopped, gone.State);
    }

    [Fact]
    public async Task Before_any_decision_the_count_is_the_members_and_a_decision_only_records_its_count()
    {
        (MembershipStore store, MembershipInstanceSource source) = await CreateAsync();
        await store.UpdateAsync(l => l.WithMember(Member("app-1", 5001)).WithMember(Member("app-2", 5002)));
        await source.RefreshAsync(CancellationToken.None);
        Assert.Equal(2, source.LiveCount);

        source.ScaleTo(5);
        await source.RefreshAsync(CancellationToken.None);

        Assert.Equal(5, source.LiveCount);
        Assert.Equal(2, source.Ready().Count);
        Assert.Null(source.MeasuredLoadTime);
        Assert.Contains("unknown in membership mode", source.LoadTimeNote, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_member_whose_heartbeat_went_stale_is_dropped_though_still_listed()
    {
        (MembershipStore store, MembershipInstanceSource source) = await CreateAsync();
        await store.UpdateAsync(l => l.WithMember(Member("app-1", 5001)));
        await source.RefreshAsync(CancellationToken.None);
        Assert.Single(source.Ready());

        _time.Advance(new FaaSCache.Options.MembershipOptions().FailureTimeout + TimeSpan.FromSeconds(1));
        await source.RefreshAsync(CancellationToken.None);

        Assert.Empty(source.Ready());
        Assert.Equal(InstanceState.Stopped, Assert.Single(source.Snapshot()).State);
    }

    [Fact]
    public async Task A_member_back_under_its_id_at_another_endpoint_replaces_the_old_one()
    {
        (MembershipStore store, MembershipInstanceSource source) = await CreateAsync();
        await store.UpdateAsync(l => l.WithMember(Member("app-1", 5001)));
        await source.RefreshAsync(CancellationToken.None);

        await store.UpdateAsync(l => l.WithoutMember("app-1").WithMember(Member("app-1", 6001)));
        await source.RefreshAsync(CancellationToken.None);

        Assert.Equal(new Uri("http://10.0.0.1:6001/"), Assert.Single(source.Ready()).PeerEndpoint);
        Assert.Equal(2, source.Snapshot().Count);
    }

    [Fact]
    public async Task No_blob_yet_means_no_instances()
    {
        (_, MembershipInstanceSource source) = await CreateAsync();

        await source.RefreshAsync(CancellationToken.None);

        Assert.Empty(source.Snapshot());
        Assert.Equal(0, source.LiveCount);
    }

    private MemberInfo Member(string id, int port) => new(id, new Uri($"http://10.0.0.1:{port}/"), _time.GetUtcNow(), _time.GetUtcNow());

    private async Task<(MembershipStore Store, MembershipInstanceSource Source)> CreateAsync()
    {
        BlobContainerClient container = await azurite.CreateContainerAsync("membership");
        var store = new MembershipStore(container, "app" + Guid.NewGuid().ToString("N")[..8]);
        return (store, new MembershipInstanceSource(store, _time, NullLogger<MembershipInstanceSource>.Instance));
    }
}
