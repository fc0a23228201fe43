using Azure;
using Azure.Storage.Blobs.Models;
using FaaSCache.SharedMemory;
using Microsoft.Extensions.Caching.Memory;
using StackExchange.Redis;

namespace FaaSCache.Benchmarks;

/// <summary>How a read path costs, which decides how many iterations it gets.</summary>
internal enum PathKind
{
    /// <summary>No I/O: lh, memorycache.</summary>
    InProcess,

    /// <summary>One request without a body: lh_strong, conditional_head.</summary>
    RoundTrip,

    /// <summary>The whole object over loopback from redis-server.</summary>
    Redis,

    /// <summary>The whole object from Azurite: storage_direct, lm.</summary>
    Transfer,
}

/// <summary>One read path on one object: <see cref="Once"/> does its untimed set-up, then returns the ticks of one timed read.</summary>
internal sealed record ReadPath(string Name, PathKind Kind, Func<CancellationToken, ValueTask<long>> Once) : ITimedPath
{
    public ValueTask<long> RunOnceAsync(CancellationToken cancellationToken) => Once(cancellationToken);
}

/// <summary>
/// The systems under test for cachelet-read, all against one Azurite and one redis-server:
/// three cachelets (local preset for lh, strong preset for lh_strong, local preset for lm, so that
/// lm's Remove never disturbs the lh copy), a bare BlobServiceClient, a Redis connection and a MemoryCache.
/// </summary>
internal sealed class CacheletReadRig(Cachelet local, Cachelet strong, Cachelet miss, BlobContainerClient container, ConnectionMultiplexer redis, MemoryCache memory) : IAsyncDisposable
{
    public const long CacheletCapacityBytes = 1L << 30;

    private const string ContainerName = "bench";
    private static int _sink;

    private readonly ConnectionMultiplexer _redis = redis;
    private readonly IDatabase _redisDb = redis.GetDatabase();

    public static async Task<CacheletReadRig> CreateAsync(AzuriteServer azurite, RedisServer redisServer, string shmRoot, CancellationToken cancellationToken)
    {
        var disposables = new List<IAsyncDisposable>();
        try
        {
            var service = new BlobServiceClient(azurite.ConnectionString, AzureBlobStore.CreateClientOptions());
            BlobContainerClient container = service.GetBlobContainerClient(ContainerName);
            await container.CreateIfNotExistsAsync(cancellationToken: cancellationToken);

            int pid = Environment.ProcessId;
            Cachelet local = NewCachelet(azurite, ConsistencyPreset.Local, $"bench-{pid}", shmRoot);
            disposables.Add(local);
            Cachelet strong = NewCachelet(azurite, ConsistencyPreset.Strong, $"bench-{pid}-strong", shmRoot);
            disposables.Add(strong);
            Cachelet miss = NewCachelet(azurite, ConsistencyPreset.Local, $"bench-{pid}-lm", shmRoot);
            disposables.Add(miss);

            var redisOptions = ConfigurationOptions.Parse(redisServer.Endpoint);
            redisOptions.AbortOnConnectFail = true;
            // A 128 MB GET takes a good fraction of a second on this machine; the 5 s defaults are too tight under load.
            redisOptions.SyncTimeout = 120_000;
            redisOptions.AsyncTimeout = 120_000;
            ConnectionMultiplexer redis = await ConnectionMultiplexer.ConnectAsync(redisOptions);
            disposables.Add(redis);

            return new CacheletReadRig(local, strong, miss, container, redis, new MemoryCache(new MemoryCacheOptions()));
        }
        catch
        {
            foreach (IAsyncDisposable d in Enumerable.Reverse(disposables))
            {
                await d.DisposeAsync();
            }

            throw;
        }
    }

    /// <summary>Puts one object of <paramref name="size"/> random bytes everywhere and returns its read paths.</summary>
    public async Task<IReadOnlyList<ReadPath>> LoadAsync(long size, int seed, CancellationToken cancellationToken)
    {
        var data = new byte[size];
        new Random(seed).NextBytes(data);
        string blobName = $"object-{size}";
        string key = $"{ContainerName}/{blobName}";
        BlobClient blob = container.GetBlobClient(blobName);
        ETag etag = (await blob.UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellationToken)).Value.ETag;
        await _redisDb.StringSetAsync(key, data);
        memory.Set(key, data);
        foreach (Cachelet c in new[] { local, strong, miss })
        {
            using ObjectLease first = await c.ReadAsync(key, cancellationToken);
            Expect(first, ReadSource.LocalMiss, size);
        }

        var buffer = new byte[size];
        var notModified = new BlobDownloadOptions { Conditions = new BlobRequestConditions { IfNoneMatch = etag } };

        // A timed read through a cachelet, touching the bytes; the read must be what the path says (checked untimed).
        async ValueTask<long> Read(Cachelet cachelet, ReadSource expected, CancellationToken ct)
        {
            long start = Stopwatch.GetTimestamp();
            ObjectLease lease = await cachelet.ReadAsync(key, ct);
            Touch(lease.Span);
            lease.Dispose();
            long end = Stopwatch.GetTimestamp();
            Expect(lease, expected, size);
            return end - start;
        }

        ValueTask<long> Lm(CancellationToken ct)
        {
            miss.Remove(key);
            return Read(miss, ReadSource.LocalMiss, ct);
        }

        async ValueTask<long> StorageDirect(CancellationToken ct)
        {
            long start = Stopwatch.GetTimestamp();
            using (BlobDownloadStreamingResult result = (await blob.DownloadStreamingAsync(cancellationToken: ct)).Value)
            {
                int filled = 0;
                int n;
                while ((n = await result.Content.ReadAsync(buffer.AsMemory(filled), ct)) > 0)
                {
                    filled += n;
                }

                if (filled != size)
                {
                    throw new InvalidOperationException($"storage_direct read {filled} of {size} bytes.");
                }
            }

            Touch(buffer);
            return Stopwatch.GetTimestamp() - start;
        }

        async ValueTask<long> Redis(CancellationToken ct)
        {
            long start = Stopwatch.GetTimestamp();
            byte[] value = (byte[]?)await _redisDb.StringGetAsync(key) ?? throw new InvalidOperationException($"redis has no '{key}'.");
            Touch(value);
            long end = Stopwatch.GetTimestamp();
            ExpectLength("redis", value.LongLength, size);
            return end - start;
        }

        ValueTask<long> Memory(CancellationToken ct)
        {
            long start = Stopwatch.GetTimestamp();
            if (!memory.TryGetValue(key, out byte[]? value) || value is null)
            {
                throw new InvalidOperationException($"MemoryCache has no '{key}'.");
            }

            Touch(value);
            long end = Stopwatch.GetTimestamp();
            ExpectLength("memorycache", value.LongLength, size);
            return ValueTask.FromResult(end - start);
        }

        // The same request AzureBlobStore makes for a strong read of a cached copy. Azure.Storage.Blobs
        // 12.30 answers a 304 with a body-less response; older versions threw RequestFailedException(304).
        async ValueTask<long> ConditionalHead(CancellationToken ct)
        {
            long start = Stopwatch.GetTimestamp();
            int status;
            try
            {
                status = (await blob.DownloadStreamingAsync(notModified, ct)).GetRawResponse().Status;
            }
            catch (RequestFailedException e) when (e.Status == 304)
            {
                status = e.Status;
            }

            long end = Stopwatch.GetTimestamp();
            if (status != 304)
            {
                throw new InvalidOperationException($"conditional_head: expected 304 Not Modified, got {status}.");
            }

            return end - start;
        }

        return
        [
            new("lh", PathKind.InProcess, ct => Read(local, ReadSource.LocalHit, ct)),
            new("lh_strong", PathKind.RoundTrip, ct => Read(strong, ReadSource.LocalHit, ct)),
            new("lm", PathKind.Transfer, Lm),
            new("storage_direct", PathKind.Transfer, StorageDirect),
            new("redis", PathKind.Redis, Redis),
            new("memorycache", PathKind.InProcess, Memory),
            new("conditional_head", PathKind.RoundTrip, ConditionalHead),
        ];
    }

    /// <summary>Drops the object of <paramref name="size"/> everywhere, so sizes do not share memory.</summary>
    public async Task UnloadAsync(long size, CancellationToken cancellationToken)
    {
        string blobName = $"object-{size}";
        string key = $"{ContainerName}/{blobName}";
        local.Remove(key);
        strong.Remove(key);
        miss.Remove(key);
        memory.Remove(key);
        await _redisDb.KeyDeleteAsync(key);
        await container.GetBlobClient(blobName).DeleteIfExistsAsync(cancellationToken: cancellationToken);
    }

    /// <summary>Version checks made by the strong cachelet and local misses of each cachelet, to show that each path did what it claims.</summary>
    public string Counters()
    {
        var lh = local.Metrics.Snapshot();
        var lhStrong = strong.Metrics.Snapshot();
        var lm = miss.Metrics.Snapshot();
        return $"lh cachelet: {lh.LocalHits} hits, {lh.LocalMisses} misses; " +
               $"lh_strong cachelet: {lhStrong.LocalHits} hits, {lhStrong.LocalMisses} misses, {lhStrong.VersionChecks} version checks; " +
               $"lm cachelet: {lm.LocalHits} hits, {lm.LocalMisses} misses";
    }

    public async ValueTask DisposeAsync()
    {
        memory.Dispose();
        await _redis.DisposeAsync();
        await miss.DisposeAsync();
        await strong.DisposeAsync();
        await local.DisposeAsync();
    }

    private static Cachelet NewCachelet(AzuriteServer azurite, ConsistencyPreset consistency, string instanceId, string shmRoot)
    {
        var options = new FaaSCacheOptions { Consistency = consistency, CapacityBytes = CacheletCapacityBytes };
        return new CacheletBuilder(instanceId, [shmRoot]).WithOptions(options).WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString)).Build();
    }

    private static void Touch(ReadOnlySpan<byte> content) => _sink += content[0] + content[^1];

    private static void Expect(ObjectLease lease, ReadSource source, long size)
    {
        if (lease.Source != source)
        {
            throw new InvalidOperationException($"Read of '{lease.Key}' was served as {lease.Source}, expected {source}.");
        }

        ExpectLength(lease.Key, lease.Count, size);
    }

    private static void ExpectLength(string what, long actual, long expected)
    {
        if (actual != expected)
        {
            throw new InvalidOperationException($"{what}: got {actual} bytes, expected {expected}.");
        }
    }
}
