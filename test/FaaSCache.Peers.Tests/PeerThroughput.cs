using System.Net.Sockets;

namespace FaaSCache.Peers.Tests;

/// <summary>
/// Remote-hit throughput over gRPC on loopback next to a raw TCP copy of the same bytes, in one process and one
/// run: every round runs every path once, in a shuffled order, so all paths see the same load on the machine. One peer
/// server per chunk size runs at once. Paths:
/// <list type="bullet">
/// <item><c>tcp_raw</c>: the owner's mapped bytes written to a loopback socket and read into an array (the floor);</item>
/// <item><c>tcp_raw_shm</c>: the same, read into a new shared-memory map (the floor for landing in shared memory);</item>
/// <item><c>rh_client</c>: <see cref="GrpcPeerClient.GetAsync{T}"/> into an array (the transport, checksum checked);</item>
/// <item><c>rh_client_pooled</c>: the same with every chunk through a pooled buffer instead of straight into the array;</item>
/// <item><c>rh_cachelet</c>: <see cref="Cachelet.ReadAsync"/> on a non-owner: a remote hit into a new shared-memory map.</item>
/// </list>
/// </summary>
internal static class PeerThroughput
{
    public const string Command = "measure";

    public static async Task<int> RunAsync(string[] args)
    {
        long[] sizes = [.. Option(args, "--sizes", "16,128").Split(',').Select(s => long.Parse(s, CultureInfo.InvariantCulture) << 20)];
        int[] chunks = [.. Option(args, "--chunks", "256,1024").Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture) << 10)];
        int n = int.Parse(Option(args, "--n", "15"), CultureInfo.InvariantCulture);
        var warmup = TimeSpan.FromSeconds(double.Parse(Option(args, "--warmup-seconds", "5"), CultureInfo.InvariantCulture));
        string? csv = args.SkipWhile(a => a != "--csv").Skip(1).FirstOrDefault();
        await using AzuriteServer azurite = await AzuriteServer.StartAsync();
        BlobContainerClient container = await azurite.CreateContainerAsync("throughput");
        IReadOnlyList<Sample> samples = await MeasureAsync(azurite.ConnectionString, container, sizes, chunks, n, warmup, Console.Out);
        if (csv is not null)
        {
            await File.WriteAllLinesAsync(csv, ["path,size_bytes,chunk_bytes,median_mb_s,best_mb_s,cores,alloc_kib_per_op,n", .. samples.Select(s => s.ToCsv())]);
        }

        return 0;
    }

    public static async Task<IReadOnlyList<Sample>> MeasureAsync(string connectionString, BlobContainerClient container, long[] sizes, int[] chunkSizes, int iterations, TimeSpan warmup, TextWriter log)
    {
        string[] members = ["a", "b"];
        var ring = new RingOwnerLocator("a", members);
        using var ownerShm = new TempShmDirectory();
        using var readerShm = new TempShmDirectory();
        PeerKey key = PeerKey.FromConnectionString(connectionString, "throughput");
        var options = new FaaSCacheOptions { Consistency = ConsistencyPreset.OwnerLocalRead, CapacityBytes = 1L << 30 };
        await using Cachelet owner = new CacheletBuilder("b", [ownerShm.Path])
            .WithOptions(options)
            .WithStorage(AzureBlobStore.FromConnectionString(connectionString))
            .WithOwners(new RingOwnerLocator("b", members))
            .Build();
        using var tcpShm = new SharedMemoryStore("tcp", [readerShm.Path]);
        var readers = new List<Reader>();
        try
        {
            foreach (int chunk in chunkSizes)
            {
                var directory = new StaticPeerDirectory();
                PeerServer server = await PeerServer.StartAsync(owner, key, configure: o => o.ChunkSize = chunk);
                directory.Set("b", server.Endpoint);
                var client = new GrpcPeerClient(directory, key);
                Cachelet cachelet = new CacheletBuilder($"a{chunk}", [readerShm.Path])
                    .WithOptions(options)
                    .WithStorage(AzureBlobStore.FromConnectionString(connectionString))
                    .WithOwners(ring)
                    .WithPeers(client)
                    .Build();
                readers.Add(new Reader(chunk, server, client, cachelet));
            }

            var keys = new Dictionary<long, string>();
            foreach (long size in sizes)
            {
                string k = Enumerable.Range(0, 10_000).Select(i => $"{container.Name}/t{size}-{i}").First(x => ring.GetOwner(x) == "b");
                await container.GetBlobClient(BlobKey.Parse(k).BlobName).UploadAsync(new BinaryData(PeerCluster.RandomBytes(checked((int)size))), overwrite: true);
                (await owner.ReadAsync(k)).Dispose();
                keys[size] = k;
            }

            using TcpLink tcp = await TcpLink.OpenAsync();
            var samples = new List<Sample>();
            await log.WriteLineAsync($"{"path",-17} {"size",6} {"chunk",7} {"median MB/s",11} {"best MB/s",9} {"vs tcp",6} {"cores",5} {"KiB alloc/op",12} {"n",3}");
            bool warm = false;
            foreach (long size in sizes)
            {
                string k = keys[size];
                using ObjectLease source = await owner.ReadAsync(k);
                ReadOnlyMemory<byte> bytes = source.Memory;
                byte[] target = new byte[size];
                Task<int> IntoTarget(long length, string version, Stream content, CancellationToken token) => FillAsync(content, target, token);
                var paths = new List<Path>
                {
                    new("tcp_raw", 0, () => tcp.CopyAsync(bytes, target)),
                    new("tcp_raw_shm", 0, async () =>
                    {
                        SharedMemoryMap map = tcpShm.Create(size);
                        try
                        {
                            await tcp.CopyAsync(bytes, map.Memory);
                        }
                        finally
                        {
                            tcpShm.Delete(map);
                        }
                    }),
                };
                foreach (Reader r in readers)
                {
                    paths.Add(new("rh_client", r.Chunk, async () => await r.Client.GetAsync("b", k, false, IntoTarget)));
                    paths.Add(new("rh_client_pooled", r.Chunk, async () =>
                    {
                        r.Client.CopyIntoDestination = false;
                        try
                        {
                            await r.Client.GetAsync("b", k, false, IntoTarget);
                        }
                        finally
                        {
                            r.Client.CopyIntoDestination = true;
                        }
                    }));
                    paths.Add(new("rh_cachelet", r.Chunk, async () =>
                    {
                        using (ObjectLease lease = await r.Cachelet.ReadAsync(k))
                        {
                            if (lease.Source != ReadSource.RemoteHit)
                            {
                                throw new InvalidOperationException($"Expected a remote hit, got {lease.Source}.");
                            }
                        }

                        r.Cachelet.Remove(k);
                    }));
                }

                // Long-running hosts run tier-1 code: warm the JIT (and connections, pools) before measuring.
                if (!warm)
                {
                    var until = Stopwatch.StartNew();
                    while (until.Elapsed < warmup)
                    {
                        foreach (Path p in paths)
                        {
                            await p.Once();
                        }
                    }

                    warm = true;
                }

                foreach (Path p in paths)
                {
                    await p.Once();
                }

                using var self = Process.GetCurrentProcess();
                var order = new Random(42);
                for (int i = 0; i < iterations; i++)
                {
                    // A new order each round, so no path always follows the same neighbour (page cache, TLB, GC state).
                    foreach (Path p in paths.OrderBy(_ => order.Next()))
                    {
                        self.Refresh();
                        TimeSpan cpu = self.TotalProcessorTime;
                        long allocated = GC.GetTotalAllocatedBytes();
                        long start = Stopwatch.GetTimestamp();
                        await p.Once();
                        p.Seconds.Add(Stopwatch.GetElapsedTime(start).TotalSeconds);
                        p.Allocated += GC.GetTotalAllocatedBytes() - allocated;
                        self.Refresh();
                        p.Cpu += self.TotalProcessorTime - cpu;
                    }
                }

                double floor = Median(paths[0].Seconds);
                foreach (Path p in paths)
                {
                    Sample s = Sample.From(p, size, floor);
                    samples.Add(s);
                    await log.WriteLineAsync(s.ToString());
                }
            }

            return samples;
        }
        finally
        {
            foreach (Reader r in readers)
            {
                await r.Server.DisposeAsync();
                r.Client.Dispose();
                await r.Cachelet.DisposeAsync();
            }
        }
    }

    private static async Task<int> FillAsync(Stream content, byte[] target, CancellationToken cancellationToken)
    {
        await content.ReadExactlyAsync(target, cancellationToken);
        return target.Length;
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted[sorted.Count / 2];
    }

    private static string Option(string[] args, string name, string fallback) => args.SkipWhile(a => a != name).Skip(1).FirstOrDefault() ?? fallback;

    internal sealed record Sample(string Path, long Size, int Chunk, double MedianMBps, double BestMBps, double VersusTcp, double Cores, long AllocatedKiBPerOp, int N)
    {
        public static Sample From(Path p, long size, double tcpMedianSeconds)
        {
            double median = Median(p.Seconds);
            return new Sample(p.Name, size, p.Chunk, size / median / 1e6, size / p.Seconds.Min() / 1e6, tcpMedianSeconds / median, p.Cpu.TotalSeconds / p.Seconds.Sum(), p.Allocated / p.Seconds.Count / 1024, p.Seconds.Count);
        }

        public string ToCsv() => string.Create(CultureInfo.InvariantCulture, $"{Path},{Size},{Chunk},{MedianMBps:0},{BestMBps:0},{Cores:0.00},{AllocatedKiBPerOp},{N}");

        public override string ToString()
            => string.Create(CultureInfo.InvariantCulture, $"{Path,-17} {Size >> 20,4}MB {(Chunk == 0 ? "-" : $"{Chunk >> 10}KB"),7} {MedianMBps,11:0} {BestMBps,9:0} {VersusTcp,6:0.00} {Cores,5:0.00} {AllocatedKiBPerOp,12} {N,3}");
    }

    internal sealed class Path(string name, int chunk, Func<Task> once)
    {
        public string Name { get; } = name;

        public int Chunk { get; } = chunk;

        public Func<Task> Once { get; } = once;

        public List<double> Seconds { get; } = [];

        public TimeSpan Cpu { get; set; }

        public long Allocated { get; set; }
    }

    private sealed record Reader(int Chunk, PeerServer Server, GrpcPeerClient Client, Cachelet Cachelet);

    /// <summary>One loopback TCP connection, reused like the gRPC channel is.</summary>
    private sealed class TcpLink : IDisposable
    {
        private const int SendChunk = 1 << 20;
        private readonly Socket _sender;
        private readonly Socket _receiver;

        private TcpLink(Socket sender, Socket receiver)
        {
            _sender = sender;
            _receiver = receiver;
        }

        public static async Task<TcpLink> OpenAsync()
        {
            using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            var sender = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            Task<Socket> accepting = listener.AcceptAsync();
            await sender.ConnectAsync(listener.LocalEndPoint!);
            return new TcpLink(sender, await accepting);
        }

        public async Task CopyAsync(ReadOnlyMemory<byte> source, Memory<byte> target)
        {
            Task sending = Task.Run(async () =>
            {
                for (int sent = 0; sent < source.Length; sent += SendChunk)
                {
                    await _sender.SendAsync(source.Slice(sent, Math.Min(SendChunk, source.Length - sent)), SocketFlags.None);
                }
            });
            for (int received = 0; received < target.Length;)
            {
                received += await _receiver.ReceiveAsync(target[received..], SocketFlags.None);
            }

            await sending;
        }

        public void Dispose()
        {
            _sender.Dispose();
            _receiver.Dispose();
        }
    }
}
