namespace FaaSCache.Core.Tests.Caching;

[Trait("Category", "Unit")]
public sealed class CacheletWriteTests
{
    [Fact]
    public async Task A_strong_write_is_in_storage_when_it_returns_and_reads_back_as_a_local_hit()
    {
        await using var h = await CacheletHarness.CreateAsync();
        WriteReceipt receipt = await h.Cachelet.WriteAsync(h.Key("out/result.json"), Encoding.UTF8.GetBytes("{\"ok\":true}"));

        Assert.True(receipt.Persisted);
        Assert.True(receipt.Cached);
        Assert.Equal(PersistMode.Sync, receipt.Persist);
        Assert.Equal("{\"ok\":true}", Encoding.UTF8.GetString((await h.DownloadDirectAsync("out/result.json"))!));
        Assert.Equal(await h.VersionAsync("out/result.json"), receipt.Version);

        using ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("out/result.json"));
        Assert.Equal(ReadSource.LocalHit, lease.Source);
    }

    [Fact]
    public async Task Async_writes_return_before_storage_persists_them_in_order_and_flush_waits()
    {
        var recorder = new RecordingStore();
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.LocalAsync, wrapStorage: s => recorder.Wrap(s));

        var receipts = new List<WriteReceipt>();
        for (int i = 1; i <= 5; i++)
        {
            receipts.Add(await h.Cachelet.WriteAsync(h.Key("a"), Encoding.UTF8.GetBytes($"a{i}")));
            receipts.Add(await h.Cachelet.WriteAsync(h.Key("b"), Encoding.UTF8.GetBytes($"b{i}")));
        }

        Assert.All(receipts, r => Assert.False(r.Persisted));
        Assert.All(receipts, r => Assert.Equal(PersistMode.Async, r.Persist));
        using (ObjectLease latest = await h.Cachelet.ReadAsync(h.Key("a")))
        {
            Assert.Equal("a5", Encoding.UTF8.GetString(latest.Span));
        }

        await h.Cachelet.FlushAsync();
        Assert.Equal(0, h.Cachelet.PendingWrites);
        Assert.Equal(
            Enumerable.Range(1, 5).SelectMany(i => new[] { $"a{i}", $"b{i}" }),
            recorder.Uploads.Select(u => u.Content));
        Assert.Equal("a5", Encoding.UTF8.GetString((await h.DownloadDirectAsync("a"))!));
        Assert.Equal("b5", Encoding.UTF8.GetString((await h.DownloadDirectAsync("b"))!));

        // Once persisted, the cached copy keeps the version the other members know (no needless transfers).
        string? pending = h.Cachelet.GetStatistics(h.Key("a"))!.Version;
        Assert.StartsWith("pending-", pending, StringComparison.Ordinal);
        Assert.Equal(2, h.MapFiles().Length);
    }

    [Fact]
    public async Task Disposing_the_cachelet_flushes_pending_async_writes()
    {
        var recorder = new RecordingStore { UploadDelay = TimeSpan.FromMilliseconds(100) };
        var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.OwnerAsync, wrapStorage: s => recorder.Wrap(s));
        for (int i = 0; i < 5; i++)
        {
            await h.Cachelet.WriteAsync(h.Key($"k{i}"), new byte[] { (byte)i });
        }

        Assert.True(h.Cachelet.PendingWrites > 0);
        await h.Cachelet.DisposeAsync();
        Assert.Empty(h.MapFiles());
        await h.DisposeAsync();

        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(new[] { (byte)i }, await h.DownloadDirectAsync($"k{i}"));
        }

        Assert.Empty(h.Cachelet.LostWrites);
    }

    [Fact]
    public async Task Persist_none_never_touches_storage()
    {
        var recorder = new RecordingStore();
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.Persist = PersistMode.None; }, wrapStorage: s => recorder.Wrap(s));

        WriteReceipt receipt = await h.Cachelet.WriteAsync(h.Key("scratch"), new byte[] { 4, 2 });
        Assert.True(receipt.Cached);
        Assert.False(receipt.Persisted);
        using (ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("scratch")))
        {
            Assert.Equal(ReadSource.LocalHit, lease.Source);
            Assert.Equal([4, 2], lease.Span.ToArray());
        }

        await h.Cachelet.FlushAsync();
        Assert.Empty(recorder.Uploads);
        Assert.Equal(0, recorder.Fetches);
        Assert.Null(await h.DownloadDirectAsync("scratch"));
    }

    [Fact]
    public async Task Persist_none_refuses_a_write_it_cannot_keep_instead_of_losing_it()
    {
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.Local; o.Persist = PersistMode.None; o.CapacityBytes = 1 << 20; });
        var e = await Assert.ThrowsAsync<CacheCapacityException>(() => h.Cachelet.WriteAsync(h.Key("big"), new byte[2 << 20]));
        Assert.Contains(h.Key("big"), e.Message, StringComparison.Ordinal);
        Assert.Contains("persist is 'none'", e.Message, StringComparison.Ordinal);
        Assert.Empty(h.MapFiles());
    }

    [Fact]
    public async Task An_async_write_that_does_not_fit_is_persisted_before_returning()
    {
        await using var h = await CacheletHarness.CreateAsync(o => { o.Consistency = ConsistencyPreset.LocalAsync; o.CapacityBytes = 1 << 20; });
        WriteReceipt receipt = await h.Cachelet.WriteAsync(h.Key("big"), CacheletHarness.RandomBytes(2 << 20));
        Assert.True(receipt.Persisted);
        Assert.False(receipt.Cached);
        Assert.Equal(2 << 20, (await h.DownloadDirectAsync("big"))!.Length);
        Assert.Empty(h.MapFiles());
    }

    [Fact]
    public async Task A_stream_write_lands_in_shared_memory_and_storage()
    {
        await using var h = await CacheletHarness.CreateAsync();
        byte[] content = CacheletHarness.RandomBytes(5_000_000, seed: 3);
        await h.Cachelet.WriteAsync(h.Key("streamed"), new MemoryStream(content));
        Assert.Equal(content, await h.DownloadDirectAsync("streamed"));
        using ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("streamed"));
        Assert.True(lease.Span.SequenceEqual(content));
    }

    [Fact]
    public async Task A_worker_written_map_is_adopted_without_a_copy()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.Owner);
        byte[] content = Encoding.UTF8.GetBytes("labelled image");
        string mapName = Guid.NewGuid().ToString("N");
        string path = Path.Combine(h.MapDirectory, mapName);
        var file = new byte[SharedMemoryMap.HeaderSize + content.Length];
        file[0] = 1;
        BitConverter.GetBytes((long)content.Length).CopyTo(file, 1);
        content.CopyTo(file, SharedMemoryMap.HeaderSize);
        await File.WriteAllBytesAsync(path, file);

        WriteReceipt receipt = await h.Cachelet.WriteMapAsync(h.Key("labels/1.png"), mapName);
        Assert.True(receipt.Persisted);
        Assert.Equal(content, await h.DownloadDirectAsync("labels/1.png"));
        using ObjectLease lease = await h.Cachelet.ReadAsync(h.Key("labels/1.png"));
        Assert.Equal(mapName, lease.MapName);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(path));
    }

    [Fact]
    public async Task A_malformed_worker_map_is_rejected_naming_the_problem()
    {
        await using var h = await CacheletHarness.CreateAsync();
        string mapName = Guid.NewGuid().ToString("N");
        await File.WriteAllBytesAsync(Path.Combine(h.MapDirectory, mapName), [0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5]);
        var e = await Assert.ThrowsAsync<SharedMemoryException>(() => h.Cachelet.WriteMapAsync(h.Key("x"), mapName));
        Assert.Contains("not initialized", e.Message, StringComparison.Ordinal);

        var traversal = await Assert.ThrowsAsync<SharedMemoryException>(() => h.Cachelet.WriteMapAsync(h.Key("x"), "../etc"));
        Assert.Contains("not a valid shared-memory map name", traversal.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Writes_raise_written_and_persisted_with_their_versions()
    {
        await using var h = await CacheletHarness.CreateAsync(o => o.Consistency = ConsistencyPreset.LocalAsync);
        var written = new List<BlobWrittenEventArgs>();
        var persisted = new TaskCompletionSource<BlobWrittenEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        h.Cachelet.Written += (_, e) => written.Add(e);
        h.Cachelet.Persisted += (_, e) => persisted.TrySetResult(e);

        WriteReceipt receipt = await h.Cachelet.WriteAsync(h.Key("evt"), new byte[] { 1 });
        BlobWrittenEventArgs stored = await persisted.Task.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(h.Key("evt"), Assert.Single(written).Key);
        Assert.Equal(receipt.Version, written[0].Version);
        Assert.Equal(await h.VersionAsync("evt"), stored.Version);
    }

    [Fact]
    public async Task Listing_gives_keys_versions_and_sizes_and_nothing_for_a_missing_container()
    {
        await using var h = await CacheletHarness.CreateAsync();
        string etag = await h.UploadDirectAsync("dir/a.bin", new byte[10]);
        await h.UploadDirectAsync("other.bin", new byte[3]);

        var listed = new List<BlobListing>();
        await foreach (BlobListing b in h.Cachelet.Storage.ListAsync(h.ContainerName, "dir/"))
        {
            listed.Add(b);
        }

        Assert.Equal(new BlobListing(h.Key("dir/a.bin"), etag, 10), Assert.Single(listed));
        await foreach (BlobListing unexpected in h.Cachelet.Storage.ListAsync("no-such-container"))
        {
            Assert.Fail($"listed {unexpected.Key}");
        }
    }

    /// <summary>Records what reaches the real store, in order.</summary>
    private sealed class RecordingStore
    {
        private readonly Lock _gate = new();
        private readonly List<(string Key, string Content)> _uploads = [];
        private int _fetches;

        public TimeSpan UploadDelay { get; init; }

        public IReadOnlyList<(string Key, string Content)> Uploads
        {
            get
            {
                lock (_gate)
                {
                    return [.. _uploads];
                }
            }
        }

        public int Fetches => Volatile.Read(ref _fetches);

        public IBlobStore Wrap(IBlobStore inner) => new Store(this, inner);

        private sealed class Store(RecordingStore owner, IBlobStore inner) : DelegatingBlobStore(inner)
        {
            public override Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
            {
                Interlocked.Increment(ref owner._fetches);
                return Inner.FetchAsync(key, ifNoneMatch, consume, cancellationToken);
            }

            public override async Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default)
            {
                await Task.Delay(owner.UploadDelay, cancellationToken);
                long start = content.Position;
                string text = await new StreamReader(content).ReadToEndAsync(cancellationToken);
                content.Position = start;
                string etag = await Inner.UploadAsync(key, content, writeId, cancellationToken);
                lock (owner._gate)
                {
                    owner._uploads.Add((key, text));
                }

                return etag;
            }
        }
    }
}
