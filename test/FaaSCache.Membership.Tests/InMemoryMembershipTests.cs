using Microsoft.Extensions.Time.Testing;

namespace FaaSCache.Membership.Tests;

/// <summary>
/// Membership against the in-memory <see cref="IBlobStore"/> and a fake clock: joins, heartbeats, failure removal and
/// compare-and-swap races in milliseconds, without Azurite. The Azurite tests keep what only real storage can show.
/// </summary>
[Trait("Category", "Unit")]
public sealed class InMemoryMembershipTests(ITestOutputHelper output) : IAsyncDisposable
{
    private const string App = "orders-app";
    private const string Key = $"{MembershipStore.DefaultContainerName}/{App}.json";
    private static readonly TimeSpan Heartbeat = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan FailureTimeout = TimeSpan.FromSeconds(15);

    private readonly InMemoryBlobStore _storage = new();
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 1, 2, 3, 4, 5, TimeSpan.Zero));
    private readonly List<MembershipDaemon> _daemons = [];

    [Fact]
    public async Task A_daemon_joins_the_list_at_start_and_leaves_it_at_stop()
    {
        MembershipDaemon a = NewDaemon("a");

        await a.StartAsync(CancellationToken.None);
        MembershipSnapshot joined = await NewStore().ReadAsync();
        await a.StopAsync(CancellationToken.None);
        MembershipSnapshot left = await NewStore().ReadAsync();

        MemberInfo entry = Assert.Single(joined.List.Members);
        Assert.Equal("a", entry.Id);
        Assert.Equal(EndpointOf("a"), entry.Endpoint);
        Assert.Equal(_time.GetUtcNow(), entry.LastHeartbeat);
        Assert.NotNull(joined.ETag);
        Assert.Empty(left.List.Members);
        Assert.NotEqual(joined.ETag, left.ETag);
        Assert.False(a.IsRunning);
    }

    [Fact]
    public async Task A_heartbeat_stamps_the_members_entry_with_the_clocks_time_and_a_new_etag()
    {
        MembershipDaemon a = NewDaemon("a");
        await a.StartAsync(CancellationToken.None);
        MembershipSnapshot before = await NewStore().ReadAsync();

        _time.Advance(Heartbeat);
        await a.HeartbeatAsync();
        MembershipSnapshot after = await NewStore().ReadAsync();

        Assert.Equal(_time.GetUtcNow(), Assert.Single(after.List.Members).LastHeartbeat);
        Assert.Equal(before.List.Members[0].StartedAt, after.List.Members[0].StartedAt);
        Assert.NotEqual(before.ETag, after.ETag);
        Assert.Null(await NewStore().ReadIfChangedAsync(after.ETag));
    }

    [Fact]
    public async Task A_member_that_stops_heartbeating_is_removed_by_the_others_once_the_failure_timeout_has_passed()
    {
        MembershipDaemon a = NewDaemon("a");
        MembershipDaemon b = NewDaemon("b");
        await a.StartAsync(CancellationToken.None);
        await b.StartAsync(CancellationToken.None);
        Assert.Equal(["a", "b"], b.Members.Select(m => m.Id));

        await a.DisposeAsync(); // a crash: no more heartbeats, no leave
        _time.Advance(FailureTimeout - TimeSpan.FromSeconds(1));
        await b.HeartbeatAsync();
        MembershipList stillThere = (await NewStore().ReadAsync()).List;
        _time.Advance(TimeSpan.FromSeconds(2));
        await b.HeartbeatAsync();
        MembershipList removed = (await NewStore().ReadAsync()).List;

        Assert.Equal(["a", "b"], stillThere.Ids);
        Assert.Equal(["b"], removed.Ids);
        Assert.Equal(["b"], b.Members.Select(m => m.Id));
        Assert.Equal(["b"], b.Owners.Current.Members);
    }

    [Fact]
    public async Task A_writer_whose_etag_went_stale_reads_again_and_keeps_the_other_writers_entry()
    {
        MembershipStore first = NewStore();
        MembershipStore second = NewStore();
        int calls = 0;

        MembershipSnapshot written = await first.UpdateAsync(list =>
        {
            if (++calls == 1)
            {
                // Between first's read and its write, second writes: first's ETag is stale and its write must fail.
                second.UpdateAsync(l => l.WithMember(Member("second"))).GetAwaiter().GetResult();
            }

            return list.WithMember(Member("first"));
        });

        Assert.Equal(2, calls);
        Assert.Equal(["first", "second"], written.List.Ids);
        Assert.Equal(["first", "second"], (await NewStore().ReadAsync()).List.Ids);
    }

    [Fact]
    public async Task Ten_parallel_writers_each_with_its_own_store_lose_none_of_their_entries()
    {
        string[] ids = [.. Enumerable.Range(0, 10).Select(i => $"member-{i:00}")];

        MembershipSnapshot[] results = await Task.WhenAll(ids.Select(id => Task.Run(() => NewStore().UpdateAsync(list => list.WithMember(Member(id))))));

        Assert.Equal(ids, (await NewStore().ReadAsync()).List.Ids);
        Assert.Equal(10, results.Select(r => r.ETag).Distinct().Count());
    }

    [Fact]
    public async Task An_update_that_keeps_losing_the_race_gives_up_after_the_attempt_limit()
    {
        MembershipStore store = NewStore(new MembershipStoreOptions { MaxAttempts = 3, BackoffBase = TimeSpan.Zero, BackoffMax = TimeSpan.FromMilliseconds(1) });
        await store.UpdateAsync(list => list.WithMember(Member("a")));
        int calls = 0;

        var e = await Assert.ThrowsAsync<MembershipConflictException>(() => store.UpdateAsync(list =>
        {
            calls++;
            _storage.Put(Key, Encoding.UTF8.GetBytes($"{{\"members\":[],\"rival\":{calls}}}"));
            return list.WithMember(Member("b"));
        }));

        Assert.Equal(3, calls);
        Assert.Equal(3, e.Attempts);
        Assert.Equal(Key, e.Blob);
    }

    [Fact]
    public async Task The_in_memory_store_refuses_a_stale_etag_and_a_create_of_an_existing_blob_as_storage_does()
    {
        ConditionalUploadResult created = await _storage.UploadIfUnchangedAsync(Key, "1"u8.ToArray(), expectedETag: null);
        ConditionalUploadResult again = await _storage.UploadIfUnchangedAsync(Key, "2"u8.ToArray(), expectedETag: null);
        ConditionalUploadResult swapped = await _storage.UploadIfUnchangedAsync(Key, "3"u8.ToArray(), created.ETag);
        ConditionalUploadResult stale = await _storage.UploadIfUnchangedAsync(Key, "4"u8.ToArray(), created.ETag);
        ConditionalUploadResult gone = await _storage.UploadIfUnchangedAsync("no-such-container/x.json", "5"u8.ToArray(), swapped.ETag);

        Assert.True(created.Written);
        Assert.Equal(ConditionalUploadResult.PreconditionFailed, again);
        Assert.True(swapped.Written);
        Assert.NotEqual(created.ETag, swapped.ETag);
        Assert.Equal(ConditionalUploadStatus.PreconditionFailed, stale.Status);
        Assert.Null(stale.ETag);
        Assert.False(gone.Written);
        Assert.Equal("3"u8.ToArray(), _storage.Get(Key));
        Assert.Equal(swapped.ETag, (await _storage.FetchBytesAsync(Key)).ETag);
    }

    public async ValueTask DisposeAsync()
    {
        await Task.WhenAll(_daemons.Select(d => d.DisposeAsync().AsTask()));
    }

    private static Uri EndpointOf(string id) => new($"http://{id}.peers.test:7070/");

    private MemberInfo Member(string id) => new(id, EndpointOf(id), _time.GetUtcNow(), _time.GetUtcNow());

    private MembershipStore NewStore(MembershipStoreOptions? options = null) => new(_storage, App, options: options);

    private MembershipDaemon NewDaemon(string id)
    {
        var daemon = new MembershipDaemon(
            NewStore(),
            new MemberIdentity(App, id, EndpointOf(id)),
            new MembershipOptions { HeartbeatInterval = Heartbeat, FailureTimeout = FailureTimeout, WatchInterval = TimeSpan.Zero },
            time: _time,
            logger: new TestLogger<MembershipDaemon>(output, id));
        _daemons.Add(daemon);
        return daemon;
    }
}
