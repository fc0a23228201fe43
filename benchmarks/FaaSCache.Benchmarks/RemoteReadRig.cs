using FaaSCache.Cluster;
using FaaSCache.Membership;
using FaaSCache.Peers;
using FaaSCache.SharedMemory;

namespace FaaSCache.Benchmarks;

/// <summary>
/// One placement of <c>remote-read</c>: an owner (a FaaSCache host process, alone in its app so it owns every key), a
/// reader (a <see cref="Cachelet"/> in this process with the owner's app key and a ring whose only member is the owner)
/// and the raw-TCP sender. On loopback, or with the owner and the TCP sender inside a network namespace whose link is
/// shaped with <c>tc</c>: then every byte of a remote hit, of the owner's download and of the TCP floor crosses that link.
/// </summary>
internal sealed class RemoteReadRig(string suffix, HostProcessCluster owners, TempShmDirectory shm, GrpcPeerClient peers, Cachelet reader, TcpFloor tcp, NetworkNamespace? network) : IAsyncDisposable
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private static int _sink;

    /// <summary>Gets the suffix of this placement's path names ("" on loopback, "_shaped" over the shaped link).</summary>
    public string Suffix => suffix;

    /// <summary>Gets the owner.</summary>
    public ClusterInstance Owner => owners.Instances[0];

    /// <summary>Gets the reader.</summary>
    public Cachelet Reader => reader;

    /// <summary>Gets the raw-TCP floor.</summary>
    public TcpFloor Tcp => tcp;

    /// <summary>Starts an owner, a reader and a TCP sender; inside <paramref name="network"/> when given (this rig then disposes it).</summary>
    public static async Task<RemoteReadRig> StartAsync(AzuriteServer azurite, string appDirectory, string suffix, NetworkNamespace? network, long maxBytes, TextWriter output, CancellationToken cancellationToken)
    {
        string appName = $"remote-read-{Guid.NewGuid().ToString("N")[..8]}";
        Func<int, HostNetwork>? placement = network is null ? null : _ => new HostNetwork(network.InstanceAddress, network.Wrap, azurite.ConnectionStringAt(network.HostAddress));
        HostProcessCluster owners = await HostProcessCluster.StartAsync(appDirectory, azurite.ConnectionString, appName, 1, network: placement, cancellationToken: cancellationToken);
        var shm = new TempShmDirectory("faascache-bench-remote-read");
        GrpcPeerClient? peers = null;
        Cachelet? reader = null;
        try
        {
            ClusterInstance owner = owners.Instances[0];
            var endpoint = new Uri((await owner.Host.GetStatusAsync(cancellationToken)).PeerEndpoint!);
            output.WriteLine($"owner{suffix}: FaaSCache host pid {owner.Host.ProcessId.ToString(Invariant)}, instance {owner.Id}, peers at {endpoint}{(network is null ? string.Empty : $", in namespace {network}")}");
            string readerId = "bench-reader" + suffix;
            peers = new GrpcPeerClient(new FixedPeerDirectory(owner.Id, endpoint), PeerKey.FromConnectionString(azurite.ConnectionString, appName));
            reader = new CacheletBuilder(readerId, [shm.Path])
                .WithOptions(new FaaSCacheOptions { Consistency = ConsistencyPreset.Owner, CapacityBytes = 1L << 30 })
                .WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString))
                .WithOwners(new RingOwnerLocator(readerId, [owner.Id]))
                .WithPeers(peers)
                .Build();
            TcpFloor tcp = network is null
                ? await TcpFloor.StartAsync(maxBytes, cancellationToken)
                : await TcpFloor.StartAsync(maxBytes, cancellationToken, network.InstanceAddress, network.Wrap);
            output.WriteLine($"tcp_raw{suffix}: benchmarks/tools/tcp_floor_sender.py, pid {tcp.ProcessId.ToString(Invariant)}");
            return new RemoteReadRig(suffix, owners, shm, peers, reader, tcp, network);
        }
        catch
        {
            if (reader is not null)
            {
                await reader.DisposeAsync();
            }

            peers?.Dispose();
            shm.Dispose();
            await owners.DisposeAsync();
            throw;
        }
    }

    /// <summary>The timed paths of this placement for one object: remote hit, remote miss, raw TCP.</summary>
    public List<ITimedPath> Paths(string key, long size, byte[] buffer) =>
    [
        new RemotePath("rh" + Suffix, async ct =>
        {
            Reader.Remove(key);
            long t0 = Stopwatch.GetTimestamp();
            using (ObjectLease lease = await Reader.ReadAsync(key, ct))
            {
                Check(lease, ReadSource.RemoteHit, size);
            }

            return Stopwatch.GetTimestamp() - t0;
        }),
        new RemotePath("rm" + Suffix, async ct =>
        {
            Reader.Remove(key);
            await Owner.RemoveFromCacheAsync(key, ct);
            long t0 = Stopwatch.GetTimestamp();
            using (ObjectLease lease = await Reader.ReadAsync(key, ct))
            {
                Check(lease, ReadSource.RemoteMiss, size);
            }

            return Stopwatch.GetTimestamp() - t0;
        }),
        new RemotePath("tcp_raw" + Suffix, async ct =>
        {
            long t0 = Stopwatch.GetTimestamp();
            await Tcp.ReadAsync(buffer, ct);
            _sink += buffer[0] + buffer[^1];
            return Stopwatch.GetTimestamp() - t0;
        }),
    ];

    /// <summary>Fills the owner with <paramref name="key"/> (a remote miss), so that rh finds it there.</summary>
    public async Task FillOwnerAsync(string key, long size, CancellationToken cancellationToken)
    {
        using ObjectLease first = await Reader.ReadAsync(key, cancellationToken);
        Check(first, ReadSource.RemoteMiss, size);
    }

    /// <summary>Drops <paramref name="key"/> on both sides.</summary>
    public async Task ForgetAsync(string key, CancellationToken cancellationToken)
    {
        Reader.Remove(key);
        await Owner.RemoveFromCacheAsync(key, cancellationToken);
    }

    /// <summary>Stops the owner; returns how it ended.</summary>
    public Task<IReadOnlyList<string>> StopAsync() => owners.StopAsync();

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await Tcp.DisposeAsync();
        await Reader.DisposeAsync();
        peers.Dispose();
        shm.Dispose();
        await owners.DisposeAsync();
        if (network is not null)
        {
            await network.DisposeAsync();
        }
    }

    /// <summary>Checks what a read served and touches its first and last byte.</summary>
    public static void Check(ObjectLease lease, ReadSource expected, long size)
    {
        if (lease.Source != expected || lease.Count != size)
        {
            throw new InvalidOperationException($"{lease.Key}: expected a {expected} of {size} bytes, got a {lease.Source} of {lease.Count} bytes.");
        }

        ReadOnlySpan<byte> span = lease.Span;
        _sink += span[0] + span[^1];
    }

    /// <summary>One timed path of one size; <see cref="Once"/> does its untimed set-up and returns the ticks of the timed read.</summary>
    public sealed record RemotePath(string Name, Func<CancellationToken, ValueTask<long>> Once) : ITimedPath
    {
        public ValueTask<long> RunOnceAsync(CancellationToken cancellationToken) => Once(cancellationToken);
    }

    /// <summary>The one member the reader ever asks.</summary>
    private sealed class FixedPeerDirectory(string memberId, Uri endpoint) : IPeerDirectory
    {
        public bool TryGetEndpoint(string id, out Uri value)
        {
            value = endpoint;
            return id == memberId;
        }
    }
}
