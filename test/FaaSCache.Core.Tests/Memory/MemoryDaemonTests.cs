using FaaSCache.Core.Tests.Caching;

namespace FaaSCache.Core.Tests.Memory;

[Trait("Category", "Unit")]
public sealed class MemoryDaemonTests
{
    private const long MiB = 1L << 20;
    private const long Limit = 1000 * MiB; // threshold 900 MiB with the default 10% headroom

    [Fact]
    public async Task Usage_within_the_headroom_evicts_least_recently_used_objects_until_below()
    {
        await using CacheletHarness h = await CreateAsync();
        string[] keys = await FillAsync(h, 4);
        (await h.Cachelet.ReadAsync(keys[0])).Dispose(); // keys[0] becomes the most recently used
        var daemon = new MemoryDaemon(h.Cachelet, new ProcMemoryReader());

        Assert.Equal(0, daemon.Act(Sample(functionBytes: 800 * MiB, h)).Objects);
        MemoryEvictionResult result = daemon.Act(Sample(functionBytes: (900 * MiB) - (4 * MiB) + (MiB + (MiB / 2)), h));

        Assert.Equal(2, result.Objects);
        Assert.Equal(2 * MiB, result.Bytes);
        Assert.False(h.Cachelet.Contains(keys[1]));
        Assert.False(h.Cachelet.Contains(keys[2]));
        Assert.True(h.Cachelet.Contains(keys[0]));
        Assert.True(h.Cachelet.Contains(keys[3]));
        Assert.Equal(1, h.Cachelet.GetStatistics(keys[1])!.MemoryEvictions);
        Assert.Equal(2, h.Cachelet.Metrics.Snapshot().MemoryEvictions);
        Assert.Equal(2 * MiB, h.Cachelet.Metrics.Snapshot().MemoryEvictedBytes);
        MemoryDaemonStatus status = daemon.Status();
        Assert.Equal((2L, 1L, 2L, 2 * MiB), (status.Samples, status.EvictionRounds, status.ObjectsEvicted, status.BytesEvicted));
        Assert.Equal(("memoryLimitBytes", 900 * MiB), (status.LimitSource, status.ThresholdBytes));
    }

    [Fact]
    public async Task Objects_in_use_and_objects_not_yet_persisted_are_never_evicted()
    {
        var upload = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using CacheletHarness h = await CreateAsync(o => o.Consistency = ConsistencyPreset.LocalAsync, s => new HeldUploads(s, upload.Task));
        try
        {
            await h.UploadDirectAsync("in-use", new byte[MiB]);
            using ObjectLease held = await h.Cachelet.ReadAsync(h.Key("in-use"));
            await h.Cachelet.WriteAsync(h.Key("dirty"), new byte[MiB]);
            await h.UploadDirectAsync("idle", new byte[MiB]);
            (await h.Cachelet.ReadAsync(h.Key("idle"))).Dispose();
            var daemon = new MemoryDaemon(h.Cachelet, new ProcMemoryReader());

            MemoryEvictionResult result = daemon.Act(Sample(functionBytes: Limit, h));

            Assert.Equal((1, MiB, 2), (result.Objects, result.Bytes, result.Skipped));
            Assert.True(h.Cachelet.Contains(h.Key("in-use")));
            Assert.True(h.Cachelet.Contains(h.Key("dirty")));
            Assert.False(h.Cachelet.Contains(h.Key("idle")));
        }
        finally
        {
            upload.TrySetResult();
        }
    }

    [Fact]
    public async Task A_read_of_an_object_the_daemon_evicted_is_counted_once_per_eviction()
    {
        await using CacheletHarness h = await CreateAsync();
        string[] keys = await FillAsync(h, 1);
        var daemon = new MemoryDaemon(h.Cachelet, new ProcMemoryReader());
        daemon.Act(Sample(functionBytes: Limit, h));

        (await h.Cachelet.ReadAsync(keys[0])).Dispose(); // a miss: read again after the eviction
        (await h.Cachelet.ReadAsync(keys[0])).Dispose(); // a hit: not counted again

        ObjectStatistics stats = h.Cachelet.GetStatistics(keys[0])!;
        Assert.Equal((1L, 1L, 1L), (stats.MemoryEvictions, stats.ReadsAfterMemoryEviction, stats.LocalHits));
    }

    [Fact]
    public async Task The_daemon_samples_on_its_clock_and_evicts_as_a_workers_resident_memory_grows()
    {
        await using CacheletHarness h = await CreateAsync();
        await FillAsync(h, 4);
        using var proc = new FakeProc();
        proc.SetProcess(Environment.ProcessId, 100 * MiB);
        proc.SetProcess(4242, 700 * MiB);
        var time = new FakeTimeProvider();
        using var daemon = new MemoryDaemon(h.Cachelet, new ProcMemoryReader(proc.Path, proc.Path), new Workers(4242), time);
        var samples = System.Threading.Channels.Channel.CreateUnbounded<MemoryEvictionResult>();
        daemon.Sampled += (_, r) => samples.Writer.TryWrite(r);
        await daemon.StartAsync(CancellationToken.None);
        try
        {
            // 100 + 700 + 4 MiB cached: below 900 MiB.
            Assert.Equal(0, (await NextSampleAsync(time, daemon, samples.Reader)).Objects);

            // The worker grows by 98 MiB: 902 MiB, two objects go.
            proc.SetProcess(4242, 798 * MiB);
            Assert.Equal(2, (await NextSampleAsync(time, daemon, samples.Reader)).Objects);
            Assert.Equal(2, h.Cachelet.Count);

            // The worker takes nearly all of it: everything cached goes.
            proc.SetProcess(4242, 880 * MiB);
            Assert.Equal(2, (await NextSampleAsync(time, daemon, samples.Reader)).Objects);
            Assert.Equal(0, h.Cachelet.Count);
            Assert.Equal(880 * MiB, daemon.Status().WorkerPrivateBytes);
            Assert.Equal(100 * MiB, daemon.Status().HostPrivateBytes);
        }
        finally
        {
            await daemon.StopAsync(CancellationToken.None);
        }
    }

    [Fact]
    public async Task Evicting_for_memory_gives_the_pages_back_and_files_kept_for_reuse_count_as_cache_memory_and_go_first()
    {
        await using CacheletHarness h = await CreateAsync();
        string[] keys = await FillAsync(h, 4);
        // A removed object's file is kept for the next large map (SharedMemoryStore recycling): its pages are still the cache's.
        Assert.True(h.Cachelet.Remove(keys[3]));
        long pagesBefore = FileBytes(h.Shm.Path);
        var daemon = new MemoryDaemon(h.Cachelet, new ProcMemoryReader());
        MemorySample measured = daemon.Measure();
        Assert.True(measured.CachedBytes >= pagesBefore - (4 * 4096), $"the daemon counts {measured.CachedBytes} cached bytes; the shared-memory files hold {pagesBefore}");

        // 2 MiB over the threshold: the kept file goes first, then one object.
        MemoryEvictionResult result = daemon.Act(new MemorySample(Limit, MemoryLimitSource.Configured, 0, (900 * MiB) - measured.CachedBytes + (2 * MiB), 0, measured.CachedBytes));

        long pagesAfter = FileBytes(h.Shm.Path);
        // (less the journal lines that say so)
        Assert.True(pagesBefore - pagesAfter >= (2 * MiB) - 4096, $"the files under {h.Shm.Path} went from {pagesBefore} to {pagesAfter} bytes: eviction must give at least 2 MiB back");
        Assert.True(result.KeptBytesReleased >= MiB, $"kept bytes released: {result.KeptBytesReleased}");
        Assert.Equal(1, result.Objects);
        Assert.Equal(2, h.Cachelet.Count);
    }

    // What the app is charged for its shared memory: every file under the root, kept ones included (tmpfs pages).
    private static long FileBytes(string root) =>
        Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories).Sum(f => new FileInfo(f).Length);

    private static async Task<MemoryEvictionResult> NextSampleAsync(FakeTimeProvider time, MemoryDaemon daemon, System.Threading.Channels.ChannelReader<MemoryEvictionResult> samples)
    {
        time.Advance(daemon.SampleInterval);
        return await samples.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30));
    }

    private static Task<CacheletHarness> CreateAsync(Action<FaaSCacheOptions>? configure = null, Func<IBlobStore, IBlobStore>? wrapStorage = null) =>
        CacheletHarness.CreateAsync(
            o =>
            {
                o.Consistency = ConsistencyPreset.Local;
                o.MemoryLimitBytes = Limit;
                configure?.Invoke(o);
            },
            wrapStorage: wrapStorage);

    private static async Task<string[]> FillAsync(CacheletHarness h, int count)
    {
        var keys = new string[count];
        for (int i = 0; i < count; i++)
        {
            keys[i] = h.Key("o" + i.ToString(CultureInfo.InvariantCulture));
            await h.UploadDirectAsync("o" + i.ToString(CultureInfo.InvariantCulture), new byte[MiB]);
            (await h.Cachelet.ReadAsync(keys[i])).Dispose();
        }

        return keys;
    }

    private static MemorySample Sample(long functionBytes, CacheletHarness h) =>
        new(Limit, MemoryLimitSource.Configured, 0, functionBytes, 0, h.Cachelet.BytesCached);

    private sealed class Workers(params int[] pids) : IWorkerProcesses
    {
        public IReadOnlyList<int> ProcessIds => pids;
    }

    /// <summary>Uploads wait until the test lets them go, so async writes stay dirty.</summary>
    private sealed class HeldUploads(IBlobStore inner, Task release) : DelegatingBlobStore(inner)
    {
        public override async Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default)
        {
            await release.WaitAsync(cancellationToken);
            return await base.UploadAsync(key, content, writeId, cancellationToken);
        }
    }

    /// <summary>A /proc of status files the test rewrites.</summary>
    private sealed class FakeProc : IDisposable
    {
        public string Path { get; } = Directory.CreateTempSubdirectory("faascache-proc-").FullName;

        public void SetProcess(int pid, long privateBytes)
        {
            string dir = System.IO.Path.Combine(Path, pid.ToString(CultureInfo.InvariantCulture));
            Directory.CreateDirectory(dir);
            long kb = privateBytes / 1024;
            File.WriteAllText(System.IO.Path.Combine(dir, "status"), string.Create(CultureInfo.InvariantCulture, $"Name:\tfake\nVmRSS:\t{kb + 2048} kB\nRssAnon:\t{kb} kB\nRssShmem:\t2048 kB\n"));
        }

        public void Dispose() => Directory.Delete(Path, recursive: true);
    }
}
