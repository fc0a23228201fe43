using System.Diagnostics;
using Azure.Storage.Blobs;
using FaaSCache.Caching;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Options;
using FaaSCache.Storage;
using FaaSCache.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace FaaSCache.Benchmarks;

/// <summary>The blobs of one size: the hot one (cached, read by the hits), a warm-up one (cached) and the misses.</summary>
internal sealed record SdkReadBlobs(long Size, string Hot, string Warmup, IReadOnlyList<string> Misses)
{
    public IEnumerable<string> All => [Hot, Warmup, .. Misses];
}

/// <summary>
/// sdk-read's system under test: the SDK endpoint over a real cachelet (default preset) and the benchmark's Azurite,
/// served on a free loopback port as the host composes it (<see cref="BlobEndpointHosting.StartAsync"/>, which the
/// tests' rig uses too). A middleware in front counts how each request was served (the <c>x-faascache-read</c>
/// header), so each batch can prove it read what it claims.
/// </summary>
internal sealed class SdkReadRig : IAsyncDisposable
{
    public const string ContainerName = "sdk-read";
    public const long CacheletCapacityBytes = 2L << 30;

    private readonly SdkEndpointServer _endpoint;
    private readonly Cachelet _cachelet;
    private readonly BlobPropertiesCache _properties;
    private readonly BlobContainerClient _direct;
    private readonly BlobContainerClient _viaEndpoint;
    private readonly EndpointReadCounts _counts;
    private readonly SdkFloorServer _floor;

    private SdkReadRig(SdkEndpointServer endpoint, Cachelet cachelet, BlobContainerClient direct, BlobContainerClient viaEndpoint, EndpointReadCounts counts, string directConnection, SdkFloorServer floor)
    {
        _floor = floor;
        _endpoint = endpoint;
        _cachelet = cachelet;
        _properties = endpoint.Services.GetRequiredService<BlobPropertiesCache>();
        _direct = direct;
        _viaEndpoint = viaEndpoint;
        _counts = counts;
        DirectConnectionString = directConnection;
    }

    public SdkEndpointAddress Address => _endpoint.Address;

    /// <summary>Gets Azurite's connection string (storage_direct).</summary>
    public string DirectConnectionString { get; }

    /// <summary>Gets the connection string a worker gets: Azurite's, with the blob endpoint at the SDK endpoint.</summary>
    public string EndpointConnectionString => _endpoint.ConnectionString;

    /// <summary>Gets the connection string of the client floor: Azurite's, with the blob endpoint at <see cref="SdkFloorServer"/>.</summary>
    public string FloorConnectionString => _floor.ConnectionString;

    public IObjectCache Cache => _cachelet;

    public ConsistencyPreset Consistency => _cachelet.Options.Consistency;

    /// <summary>Starts the endpoint over a cachelet of the default preset, or of <paramref name="consistency"/>.</summary>
    public static async Task<SdkReadRig> StartAsync(AzuriteServer azurite, string shmRoot, ConsistencyPreset? consistency, CancellationToken cancellationToken)
    {
        Cachelet cachelet = new CacheletBuilder($"sdk-read-{Environment.ProcessId}", [shmRoot])
            .WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString))
            .Configure(o =>
            {
                o.CapacityBytes = CacheletCapacityBytes;
                o.Consistency = consistency ?? o.Consistency;
            })
            .Build();
        SdkEndpointServer? endpoint = null;
        SdkFloorServer? floor = null;
        try
        {
            var counts = new EndpointReadCounts();
            // How a request was served is counted when the response starts, before the client can see any of it; the
            // endpoint's own time (arrival until the handler returns, the body handed to the socket) when it ends.
            endpoint = await BlobEndpointHosting.StartAsync(cachelet, azurite.ConnectionString, inFront: app => app.Use(async (http, next) =>
            {
                long start = counts.Arrived();
                http.Response.OnStarting(() =>
                {
                    counts.Record(http.Response.Headers[BlobEndpointHandler.ReadSourceHeader].ToString());
                    return Task.CompletedTask;
                });
                try
                {
                    await next(http);
                }
                finally
                {
                    counts.Ended(start);
                }
            }), cancellationToken: cancellationToken);

            var options = new BlobClientOptions(AzuriteServer.PinnedServiceVersion);
            BlobContainerClient direct = new BlobServiceClient(azurite.ConnectionString, options).GetBlobContainerClient(ContainerName);
            await direct.CreateIfNotExistsAsync(cancellationToken: cancellationToken);
            BlobContainerClient viaEndpoint = new BlobServiceClient(endpoint.ConnectionString, options).GetBlobContainerClient(ContainerName);
            floor = await SdkFloorServer.StartAsync(azurite.ConnectionString, cancellationToken);
            return new SdkReadRig(endpoint, cachelet, direct, viaEndpoint, counts, azurite.ConnectionString, floor);
        }
        catch
        {
            if (endpoint is not null)
            {
                await endpoint.DisposeAsync();
            }

            if (floor is not null)
            {
                await floor.DisposeAsync();
            }

            await cachelet.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// Uploads the blobs of <paramref name="size"/> (random bytes, each blob its own) and reads the hot and warm-up
    /// ones once through the endpoint, so that they are cached with their properties; the misses are not.
    /// </summary>
    public async Task<SdkReadBlobs> LoadAsync(long size, int misses, int seed, CancellationToken cancellationToken)
    {
        string label = ReportFormat.SizeLabel(size).Replace(" ", "", StringComparison.Ordinal);
        var blobs = new SdkReadBlobs(size, $"{label}/hot", $"{label}/warmup", [.. Enumerable.Range(0, misses).Select(i => $"{label}/miss-{i:00}")]);
        byte[] data = new byte[size];
        new Random(seed).NextBytes(data);
        int index = 0;
        foreach (string name in blobs.All)
        {
            // Each blob its own bytes at both ends, without a new random buffer per blob.
            BitConverter.TryWriteBytes(data.AsSpan(0, 4), index);
            BitConverter.TryWriteBytes(data.AsSpan((int)size - 4), index++);
            Azure.Response<Azure.Storage.Blobs.Models.BlobContentInfo> uploaded = await _direct.GetBlobClient(name).UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellationToken);
            if (name == blobs.Hot || name == blobs.Warmup)
            {
                _floor.Put(ContainerName, name, data.ToArray(), uploaded.Value.ETag.ToString("H"), uploaded.Value.LastModified);
            }
        }

        foreach (string name in new[] { blobs.Hot, blobs.Warmup })
        {
            await _viaEndpoint.GetBlobClient(name).DownloadContentAsync(cancellationToken);
            // A miss is streamed on while it fills: the cache admits the object just after the last byte is sent.
            for (int i = 0; i < 100 && !_cachelet.Contains(Key(name)); i++)
            {
                await Task.Delay(20, cancellationToken);
            }

            if (!_cachelet.Contains(Key(name)))
            {
                throw new InvalidOperationException($"{Key(name)} is not cached after a read through the SDK endpoint at {Address.BlobEndpoint}.");
            }
        }

        return blobs;
    }

    /// <summary>Drops <paramref name="names"/> from the cache and the endpoint's properties, so that the next read of each is a miss.</summary>
    public void Evict(IEnumerable<string> names)
    {
        foreach (string name in names)
        {
            // A streamed miss is admitted just after its last byte went out: drop it once it is in, not before.
            SpinWait.SpinUntil(() => _cachelet.Contains(Key(name)), TimeSpan.FromSeconds(2));
            _cachelet.Remove(Key(name));
            _properties.Forget(Key(name));
        }
    }

    /// <summary>Drops the blobs of one size everywhere, so that sizes do not share memory.</summary>
    public async Task UnloadAsync(SdkReadBlobs blobs, CancellationToken cancellationToken)
    {
        Evict(blobs.All);
        _floor.Remove(ContainerName, blobs.Hot);
        _floor.Remove(ContainerName, blobs.Warmup);
        foreach (string name in blobs.All)
        {
            await _direct.GetBlobClient(name).DeleteIfExistsAsync(cancellationToken: cancellationToken);
        }
    }

    /// <summary>A binding's read of a cached blob: the lease from the cache, its bytes copied into an array of their own (what an SDK client ends with).</summary>
    public async ValueTask<long> BindingReadAsync(string name, CancellationToken cancellationToken)
    {
        long start = Stopwatch.GetTimestamp();
        ObjectLease lease = await _cachelet.ReadAsync(Key(name), cancellationToken);
        byte[] bytes = lease.Memory.ToArray();
        lease.Dispose();
        long end = Stopwatch.GetTimestamp();
        if (lease.Source != ReadSource.LocalHit || bytes.Length != lease.Count)
        {
            throw new InvalidOperationException($"binding read of {lease.Key}: served as {lease.Source} with {bytes.Length} of {lease.Count} bytes, expected a local hit.");
        }

        return end - start;
    }

    /// <summary>How the endpoint has answered so far (by the <c>x-faascache-read</c> header), once no request is in flight.</summary>
    public async Task<EndpointReadCounts.Snapshot> CountsAsync(CancellationToken cancellationToken)
    {
        // A client has its whole answer a moment before the handler returns: wait for the last request to be counted.
        for (int i = 0; i < 1000 && _counts.InFlight > 0; i++)
        {
            await Task.Delay(1, cancellationToken);
        }

        return _counts.Take();
    }

    public async ValueTask DisposeAsync()
    {
        await _endpoint.DisposeAsync();
        await _floor.DisposeAsync();
        await _cachelet.DisposeAsync();
    }

    private static string Key(string name) => $"{ContainerName}/{name}";
}

/// <summary>The endpoint's answers by how they were served (lh, lm, anything else, none: forwarded to storage), and its time.</summary>
internal sealed class EndpointReadCounts
{
    private long _localHits;
    private long _localMisses;
    private long _other;
    private long _forwarded;
    private long _serverTicks;
    private long _inFlight;

    public long InFlight => Interlocked.Read(ref _inFlight);

    /// <summary>A request arrived; returns its start timestamp.</summary>
    public long Arrived()
    {
        Interlocked.Increment(ref _inFlight);
        return Stopwatch.GetTimestamp();
    }

    /// <summary>The handler of a request that arrived at <paramref name="start"/> returned.</summary>
    public void Ended(long start)
    {
        Interlocked.Add(ref _serverTicks, Stopwatch.GetTimestamp() - start);
        Interlocked.Decrement(ref _inFlight);
    }

    public void Record(string source)
    {
        switch (source)
        {
            case "lh":
                Interlocked.Increment(ref _localHits);
                break;
            case "lm":
                Interlocked.Increment(ref _localMisses);
                break;
            case "":
                Interlocked.Increment(ref _forwarded);
                break;
            default:
                Interlocked.Increment(ref _other);
                break;
        }
    }

    public Snapshot Take() => new(Interlocked.Read(ref _localHits), Interlocked.Read(ref _localMisses), Interlocked.Read(ref _other), Interlocked.Read(ref _forwarded), Interlocked.Read(ref _serverTicks));

    /// <summary>Counts at one moment; <c>b - a</c> is what happened in between.</summary>
    public readonly record struct Snapshot(long LocalHits, long LocalMisses, long Other, long Forwarded, long ServerTicks)
    {
        public static Snapshot operator -(Snapshot b, Snapshot a) =>
            new(b.LocalHits - a.LocalHits, b.LocalMisses - a.LocalMisses, b.Other - a.Other, b.Forwarded - a.Forwarded, b.ServerTicks - a.ServerTicks);

        public long Requests => LocalHits + LocalMisses + Other + Forwarded;

        public override string ToString() => $"{LocalHits} lh, {LocalMisses} lm, {Other} other, {Forwarded} forwarded";
    }
}
