namespace FaaSCache.Core.Tests.Caching;

/// <summary>Three real cachelets on one (in-memory) storage account, joined by an in-process transport.</summary>
[Trait("Category", "Unit")]
public sealed class CacheletPeerTests
{
    private static readonly string[] Members = ["a", "b", "c"];

    [Fact]
    public async Task A_read_owned_by_another_member_is_a_remote_miss_then_a_remote_hit_elsewhere_then_local_hits()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.OwnerLocalRead);
        string key = cluster.KeyOwnedBy("b");
        byte[] content = CacheletHarness.RandomBytes(1_000_000);
        await cluster.UploadAsync(key, content);

        using (ObjectLease first = await cluster["a"].ReadAsync(key))
        {
            Assert.Equal(ReadSource.RemoteMiss, first.Source);
            Assert.True(first.Span.SequenceEqual(content));
        }

        Assert.True(cluster["b"].Contains(key));
        Assert.True(cluster["b"].GetStatistics(key)!.Owned);
        Assert.False(cluster["a"].GetStatistics(key)!.Owned);
        using (ObjectLease fromC = await cluster["c"].ReadAsync(key))
        {
            Assert.Equal(ReadSource.RemoteHit, fromC.Source);
        }

        using ObjectLease again = await cluster["a"].ReadAsync(key);
        Assert.Equal(ReadSource.LocalHit, again.Source);
        Assert.Equal(content.Length, cluster["b"].Metrics.Snapshot().BytesFetched);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().BytesFetched + cluster["c"].Metrics.Snapshot().BytesFetched);
        Assert.Equal(2L * content.Length, cluster["a"].Metrics.Snapshot().BytesFromPeers + cluster["c"].Metrics.Snapshot().BytesFromPeers);
    }

    [Fact]
    public async Task When_the_owner_is_down_the_reader_falls_back_to_storage_and_counts_it()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Local);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, [1, 2, 3]);
        cluster.Peers.TakeDown("b");

        using ObjectLease lease = await cluster["a"].ReadAsync(key);
        Assert.Equal(ReadSource.StorageFallback, lease.Source);
        Assert.Equal([1, 2, 3], lease.Span.ToArray());
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().StorageFallbacks);
        Assert.Equal(0, cluster["a"].Metrics.Snapshot().LocalMisses);
        Assert.Equal(1, cluster["a"].GetStatistics(lease.Key)!.StorageFallbacks);
    }

    [Theory]
    [InlineData(ConsistencyPreset.Strong)]
    [InlineData(ConsistencyPreset.Owner)]
    public async Task After_a_write_by_one_member_every_other_member_reads_the_new_value(ConsistencyPreset preset)
    {
        await using var cluster = await Cluster.StartAsync(preset);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("1"));
        foreach (string m in Members)
        {
            (await cluster[m].ReadAsync(key)).Dispose();
        }

        WriteReceipt receipt = await cluster["a"].WriteAsync(key, Encoding.UTF8.GetBytes("2"));
        Assert.True(receipt.Persisted);
        Assert.Equal(1, cluster.Peers.Puts);

        foreach (string m in Members)
        {
            using ObjectLease lease = await cluster[m].ReadAsync(key);
            Assert.Equal("2", Encoding.UTF8.GetString(lease.Span));
        }

        // The owner told c to drop its stale copy.
        Assert.Equal(1, cluster["c"].Metrics.Snapshot().Invalidations);

        Assert.Equal("2", Encoding.UTF8.GetString((await cluster.DownloadAsync(key))!));
    }

    [Fact]
    public async Task Under_owner_a_stale_copy_is_caught_by_the_version_query_even_without_invalidation()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("old"));
        (await cluster["c"].ReadAsync(key)).Dispose();
        cluster.Peers.DropInvalidations = true;

        await cluster["b"].WriteAsync(key, Encoding.UTF8.GetBytes("new"));
        Assert.True(cluster["c"].Contains(key));

        using ObjectLease lease = await cluster["c"].ReadAsync(key);
        Assert.Equal("new", Encoding.UTF8.GetString(lease.Span));
        Assert.Equal(ReadSource.RemoteHit, lease.Source);
    }

    [Fact]
    public async Task Under_local_a_write_stays_on_the_writer_and_others_keep_their_copy()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Local);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("1"));
        (await cluster["c"].ReadAsync(key)).Dispose();

        await cluster["a"].WriteAsync(key, Encoding.UTF8.GetBytes("2"));

        Assert.Equal(0, cluster.Peers.Puts);
        using ObjectLease stale = await cluster["c"].ReadAsync(key);
        Assert.Equal("1", Encoding.UTF8.GetString(stale.Span));
        Assert.Equal(ReadSource.LocalHit, stale.Source);
    }

    [Fact]
    public async Task A_forwarded_write_raises_the_cache_trigger_on_the_owner_only()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Strong);
        string key = cluster.KeyOwnedBy("c");
        var fired = Members.ToDictionary(m => m, _ => 0);
        foreach (string m in Members)
        {
            cluster[m].Written += (_, _) => fired[m]++;
        }

        await cluster["a"].WriteAsync(key, new byte[] { 9 });

        Assert.Equal(new Dictionary<string, int> { ["a"] = 0, ["b"] = 0, ["c"] = 1 }, fired);
        Assert.True(cluster["c"].Contains(key));
        Assert.True(cluster["a"].Contains(key));
    }

    [Fact]
    public async Task A_write_whose_owner_is_down_is_persisted_by_the_writer()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");
        cluster.Peers.TakeDown("b");

        WriteReceipt receipt = await cluster["a"].WriteAsync(key, new byte[] { 5 });
        Assert.True(receipt.Persisted);
        Assert.Equal([5], await cluster.DownloadAsync(key));
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
    }

    [Fact]
    public async Task A_write_whose_owner_failed_after_receiving_it_is_not_written_a_second_time_by_the_writer()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");
        cluster.Peers.DiesAfterPut = "b";

        // The owner committed it, then failed: the writer cannot know that, so it reports the outcome as unknown rather
        // than upload it again (a second copy could land after a newer write by someone else).
        var e = await Assert.ThrowsAsync<WriteOutcomeUnknownException>(() => cluster["a"].WriteAsync(key, new byte[] { 5 }));
        Assert.Equal(key, e.Key);
        Assert.Equal([5], await cluster.DownloadAsync(key));
        Assert.Equal((0L, 1L), (cluster["a"].Metrics.Snapshot().BytesWritten, cluster["b"].Metrics.Snapshot().BytesWritten));
        Assert.Equal(1, cluster["a"].Metrics.Snapshot().OwnerUnreachable);
    }

    [Fact]
    public async Task A_new_owner_takes_a_moved_object_from_the_previous_owner_instead_of_storage()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.OwnerLocalRead, members: ["a", "b"]);
        // A key owned by b now, and by the newcomer c once it joins.
        string key = cluster.KeyMovingTo("b", "c");
        await cluster.UploadAsync(key, new byte[1000]);
        (await cluster["b"].ReadAsync(key)).Dispose();

        await cluster.JoinAsync("c");
        using ObjectLease lease = await cluster["c"].ReadAsync(key);
        Assert.Equal(ReadSource.RemoteHit, lease.Source);
        Assert.Equal(0, cluster["c"].Metrics.Snapshot().BytesFetched);
    }

    [Fact]
    public async Task An_owners_reads_for_peers_are_counted_apart_from_its_own_functions_reads()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.OwnerLocalRead);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, new byte[4096]);

        (await cluster["a"].ReadAsync(key)).Dispose(); // b: a peer miss (fetched for a)
        (await cluster["c"].ReadAsync(key)).Dispose(); // b: a peer hit

        ObjectStatistics owner = cluster["b"].GetStatistics(key)!;
        Assert.Equal((0L, 0L, 1L, 1L), (owner.LocalHits, owner.LocalMisses, owner.PeerHits, owner.PeerMisses));
        Assert.Equal(0, owner.Accesses);
        Assert.Equal(2, owner.PeerAccesses);
        var counters = cluster["b"].Metrics.Snapshot();
        Assert.Equal((0L, 0L, 1L, 1L), (counters.LocalHits, counters.LocalMisses, counters.PeerHits, counters.PeerMisses));
    }

    [Fact]
    public async Task A_write_forwarded_to_the_owner_counts_once_as_a_write_across_the_cluster()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.Owner);
        string key = cluster.KeyOwnedBy("b");

        WriteReceipt receipt = await cluster["a"].WriteAsync(key, new byte[1000]);

        Assert.Equal(1, cluster["a"].GetStatistics(key)!.Writes);
        Assert.Equal((0L, 1L), (cluster["b"].GetStatistics(key)!.Writes, cluster["b"].GetStatistics(key)!.PeerWrites));
        Assert.Equal(1, Members.Sum(m => cluster[m].Metrics.Snapshot().Writes));
        Assert.Equal(1, cluster["b"].Metrics.Snapshot().PeerWrites);
        // Measured where the copies happened: into a's map (1000) and into the owner's (1000 sent to it).
        Assert.Equal(2000, receipt.BytesCopied);
    }

    [Fact]
    public async Task After_a_member_joins_ownership_is_re_derived_from_the_new_ring()
    {
        await using var cluster = await Cluster.StartAsync(ConsistencyPreset.OwnerLocalRead, members: ["a", "b"]);
        string key = cluster.KeyMovingTo("b", "c");
        await cluster.UploadAsync(key, new byte[1000]);
        (await cluster["b"].ReadAsync(key)).Dispose();
        Assert.True(cluster["b"].GetStatistics(key)!.Owned);

        await cluster.JoinAsync("c");

        Assert.False(cluster["b"].GetStatistics(key)!.Owned);
        Assert.True(cluster["b"].Contains(key));
    }

    [Theory]
    [InlineData(ConsistencyPreset.Strong)]
    [InlineData(ConsistencyPreset.Owner)]
    [InlineData(ConsistencyPreset.OwnerAsync)]
    [InlineData(ConsistencyPreset.OwnerLocalRead)]
    [InlineData(ConsistencyPreset.Local)]
    [InlineData(ConsistencyPreset.LocalAsync)]
    public async Task A_create_only_write_through_another_member_of_a_blob_created_through_one_is_refused_and_writes_nothing(ConsistencyPreset preset)
    {
        await using var cluster = await Cluster.StartAsync(preset);
        string key = cluster.KeyOwnedBy("b");
        var written = new List<string>();
        foreach (string m in Members)
        {
            cluster[m].Written += (_, e) => written.Add($"{m} {e.Key}");
        }

        WriteReceipt created = await cluster["a"].CreateAsync(key, Encoding.UTF8.GetBytes("first"));
        await Assert.ThrowsAsync<BlobAlreadyExistsException>(() => cluster["c"].CreateAsync(key, Encoding.UTF8.GetBytes("second")));
        await Assert.ThrowsAsync<BlobAlreadyExistsException>(() => cluster["b"].CreateAsync(key, Encoding.UTF8.GetBytes("third")));

        foreach (string m in Members)
        {
            await cluster[m].FlushAsync();
        }

        Assert.Equal("first", Encoding.UTF8.GetString((await cluster.DownloadAsync(key))!));
        Assert.Single(written);
        // Under the owner presets the owner committed it (and decided), under the local ones the writer did (storage decided).
        Assert.Equal(preset is ConsistencyPreset.Local or ConsistencyPreset.LocalAsync ? "a" : "b", written[0].Split(' ')[0]);
        // A create-only write is persisted before it is acknowledged wherever no owner can decide for the others.
        Assert.True(created.Persisted || preset == ConsistencyPreset.OwnerAsync);
    }

    [Theory]
    [InlineData(ConsistencyPreset.Owner)]
    [InlineData(ConsistencyPreset.OwnerAsync)]
    public async Task A_write_storage_took_around_the_cache_drops_every_members_copy_the_owners_too(ConsistencyPreset preset)
    {
        await using var cluster = await Cluster.StartAsync(preset);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("1"));
        foreach (string m in Members)
        {
            (await cluster[m].ReadAsync(key)).Dispose();
        }

        string etag = await cluster.UploadAsync(key, Encoding.UTF8.GetBytes("2"));
        await cluster["a"].InvalidateEverywhereAsync(key, etag);

        Assert.All(Members, m => Assert.False(cluster[m].Contains(key)));
        foreach (string m in Members)
        {
            using ObjectLease lease = await cluster[m].ReadAsync(key);
            Assert.Equal("2", Encoding.UTF8.GetString(lease.Span));
        }

        // A delete names no version: every copy goes.
        await cluster["c"].InvalidateEverywhereAsync(key, null);
        Assert.All(Members, m => Assert.False(cluster[m].Contains(key)));
    }

    private sealed class Cluster : IAsyncDisposable
    {
        private readonly Dictionary<string, (Cachelet Cachelet, RingOwnerLocator Ring, TempShmDirectory Shm)> _members = [];
        private readonly FaaSCacheOptions _options;
        private readonly InMemoryBlobStore _storage = new();

        private Cluster(string container, FaaSCacheOptions options)
        {
            Container = container;
            _options = options;
        }

        public InProcessPeers Peers { get; } = new();

        public string Container { get; }

        public Cachelet this[string id] => _members[id].Cachelet;

        public static Task<Cluster> StartAsync(ConsistencyPreset preset, string[]? members = null)
        {
            var cluster = new Cluster("peers-" + Guid.NewGuid().ToString("N")[..8], new FaaSCacheOptions { Consistency = preset, CapacityBytes = 64L << 20 });
            members ??= Members;
            foreach (string id in members)
            {
                cluster.AddMember(id, members);
            }

            return Task.FromResult(cluster);
        }

        public Task JoinAsync(string id)
        {
            string[] before = [.. _members.Keys];
            string[] all = [.. before, id];
            // The newcomer starts from the list it read, then sees itself join: its ring changes like everyone's.
            AddMember(id, before);
            foreach ((string _, (Cachelet _, RingOwnerLocator ring, TempShmDirectory _)) in _members)
            {
                ring.Update(all);
            }

            return Task.CompletedTask;
        }

        public string KeyOwnedBy(string member)
        {
            ConsistentHashRing ring = _members.Values.First().Ring.Current;
            return Enumerable.Range(0, 10_000).Select(i => $"{Container}/k{i}").First(k => ring.GetOwner(k) == member);
        }

        public string KeyMovingTo(string from, string to)
        {
            ConsistentHashRing now = _members.Values.First().Ring.Current;
            ConsistentHashRing later = now.WithMember(to);
            return Enumerable.Range(0, 10_000).Select(i => $"{Container}/k{i}").First(k => now.GetOwner(k) == from && later.GetOwner(k) == to);
        }

        public Task<string> UploadAsync(string key, byte[] content) => Task.FromResult(_storage.Put(key, content));

        public Task<byte[]?> DownloadAsync(string key) => Task.FromResult(_storage.Get(key));

        public async ValueTask DisposeAsync()
        {
            foreach ((Cachelet cachelet, _, TempShmDirectory shm) in _members.Values)
            {
                await cachelet.DisposeAsync();
                shm.Dispose();
            }
        }

        private void AddMember(string id, string[] members)
        {
            var ring = new RingOwnerLocator(id, members);
            var shm = new TempShmDirectory();
            Cachelet cachelet = new CacheletBuilder(id, [shm.Path]).WithOptions(_options).WithStorage(_storage).WithOwners(ring).WithPeers(Peers).Build();
            Peers.Add(id, cachelet);
            _members[id] = (cachelet, ring, shm);
        }
    }
}
