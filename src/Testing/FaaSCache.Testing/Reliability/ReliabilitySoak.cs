namespace FaaSCache.Testing;

/// <summary>
/// <c>soak</c>: a bounded mixed workload (reads and writes, hits and misses, 1 KB to 16 MB over a fixed key set, 3 clients
/// on 3 instances under <c>owner</c>) for the mode's duration, sampling every <see cref="SampleInterval"/> the hosts' and
/// workers' resident memory and open file descriptors, the hosts' map counts and the window's p99 latency. A trend check
/// compares the later samples with the earlier ones after a warm-up third (see <see cref="Growth"/>) and fails on growth.
/// </summary>
public static class ReliabilitySoak
{
    /// <summary>How often the soak samples.</summary>
    public static readonly TimeSpan SampleInterval = TimeSpan.FromSeconds(10);

    private const int Clients = 3;

    /// <summary>Key sizes: mostly small, some 1 MB, one 16 MB (bounded: at most this set is ever stored).</summary>
    private static readonly (string Key, int Bytes)[] KeySet =
    [
        .. Enumerable.Range(0, 16).Select(i => ($"small-{i.ToString(CultureInfo.InvariantCulture)}", 1024 << (i % 6))),
        .. Enumerable.Range(0, 3).Select(i => ($"medium-{i.ToString(CultureInfo.InvariantCulture)}", 1 << 20)),
        ("large-0", 16 << 20),
    ];

    /// <summary>Runs the soak for <paramref name="duration"/>; writes the samples' CSV (reliability-soak.csv) into <paramref name="resultsDirectory"/>.</summary>
    public static async Task<(ReliabilityRow Row, IReadOnlyList<SoakSample> Samples)> RunAsync(AzuriteServer azurite, TimeSpan duration, string resultsDirectory, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("soak (owner)");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "owner", 3, output, cancellation);
        var latencies = new List<double>();
        var latencyLock = new Lock();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellation);

        async Task ClientAsync(int client)
        {
            var random = new Random(1000 + client);
            for (int n = 0; !stop.IsCancellationRequested; n++)
            {
                ClusterInstance instance = rig.Cluster[random.Next(3)];
                (string key, int bytes) = random.Next(20) == 0 ? KeySet[^1] : KeySet[random.Next(KeySet.Length - 1)];
                long t0 = Stopwatch.GetTimestamp();
                // 30% writes (which make other instances' copies misses), 70% reads (hits once cached).
                RegisterOp op = random.Next(10) < 3
                    ? await ReliabilityRig.WriteAsync(instance, key, $"c{client.ToString(CultureInfo.InvariantCulture)}n{n.ToString(CultureInfo.InvariantCulture)}", bytes, row, null, CancellationToken.None)
                    : await ReliabilityRig.ReadAsync(instance, key, row, null, CancellationToken.None);
                lock (latencyLock)
                {
                    latencies.Add(Stopwatch.GetElapsedTime(t0).TotalMilliseconds);
                }

                _ = op;
            }
        }

        Task[] clients = [.. Enumerable.Range(0, Clients).Select(ClientAsync)];
        var samples = new List<SoakSample>();
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration)
        {
            await Task.Delay(SampleInterval, cancellation);
            double[] window;
            lock (latencyLock)
            {
                window = [.. latencies];
                latencies.Clear();
            }

            samples.Add(await SampleAsync(rig, clock.Elapsed.TotalSeconds, window, cancellation));
            output.WriteLine($"  soak {samples[^1]}");
        }

        await stop.CancelAsync();
        await Task.WhenAll(clients);
        foreach (string growth in Growth(samples))
        {
            row.Note($"FAILED: {growth}");
        }

        row.Note($"{samples.Count.ToString(CultureInfo.InvariantCulture)} samples over {duration.TotalMinutes:0.#} min; {Summary(samples)}");
        await ReliabilityFaults.StillServesAsync(rig, rig.Cluster.Instances, row, cancellation);
        await rig.FinishAsync(row, output);
        WriteSamples(resultsDirectory, samples);
        return (row, samples);
    }

    /// <summary>
    /// What grew: the first third of the samples is warm-up (JIT, caches and worker heaps filling up to the key set); of the
    /// rest, the median of the later half against the earlier half. Memory may grow by half, descriptors by 20 and a
    /// quarter, maps by 5 and a quarter.
    /// </summary>
    public static IReadOnlyList<string> Growth(IReadOnlyList<SoakSample> samples)
    {
        List<SoakSample> steady = [.. samples.Skip(samples.Count / 3)];
        if (steady.Count < 4)
        {
            return [];
        }

        int half = steady.Count / 2;
        var growth = new List<string>();
        void Check(string what, Func<SoakSample, double> measure, double factor, double slack)
        {
            double first = Median(steady.Take(half).Select(measure));
            double last = Median(steady.Skip(steady.Count - half).Select(measure));
            if (last > (first * factor) + slack)
            {
                growth.Add(string.Create(CultureInfo.InvariantCulture, $"{what} grew from {first:0.#} to {last:0.#}"));
            }
        }

        Check("host memory (MB)", s => s.HostRssMb, 1.5, 0);
        Check("worker memory (MB)", s => s.WorkerRssMb, 1.5, 0);
        Check("host file descriptors", s => s.HostFds, 1.25, 20);
        Check("worker file descriptors", s => s.WorkerFds, 1.25, 20);
        Check("maps", s => s.Maps, 1.25, 5);
        return growth;
    }

    private static async Task<SoakSample> SampleAsync(ReliabilityRig rig, double seconds, double[] window, CancellationToken cancellation)
    {
        double hostRss = 0, workerRss = 0, hostFds = 0, workerFds = 0, maps = 0;
        foreach (ClusterInstance instance in rig.Cluster.Instances)
        {
            HostStatus status = await instance.Host.GetStatusAsync(cancellation);
            hostRss += RssMb(instance.Host.ProcessId);
            hostFds += Fds(instance.Host.ProcessId);
            maps += status.SharedMemory.Maps;
            foreach (HostWorkerStatus worker in status.Workers.Where(w => w.Pid > 0))
            {
                workerRss += RssMb(worker.Pid);
                workerFds += Fds(worker.Pid);
            }
        }

        Array.Sort(window);
        double p99 = window.Length == 0 ? double.NaN : window[Math.Min(window.Length - 1, (int)Math.Ceiling(window.Length * 0.99) - 1)];
        return new SoakSample(seconds, hostRss, workerRss, hostFds, workerFds, maps, window.Length, p99);
    }

    // Private resident memory (VmRSS - RssShmem), as the Memory Daemon counts it: the pages of the cache's shared-memory
    // maps a process has touched are cached objects, bounded by the capacity and sampled as the map count, not growth.
    private static double RssMb(int pid)
    {
        double rss = 0, shmem = 0;
        foreach (string line in File.ReadLines($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                rss = KiB(line);
            }
            else if (line.StartsWith("RssShmem:", StringComparison.Ordinal))
            {
                shmem = KiB(line);
            }
        }

        return Math.Max(0, rss - shmem) / 1024;

        static double KiB(string line) => double.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture);
    }

    private static int Fds(int pid) => Directory.EnumerateFileSystemEntries($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/fd").Count();

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = [.. values.Order()];
        return sorted.Length == 0 ? 0 : sorted[sorted.Length / 2];
    }

    private static string Summary(List<SoakSample> samples) => samples.Count == 0
        ? "no samples"
        : string.Create(
            CultureInfo.InvariantCulture,
            $"first/last sample: host memory {samples[0].HostRssMb:0} / {samples[^1].HostRssMb:0} MB, worker memory {samples[0].WorkerRssMb:0} / {samples[^1].WorkerRssMb:0} MB, " +
            $"host fds {samples[0].HostFds:0} / {samples[^1].HostFds:0}, worker fds {samples[0].WorkerFds:0} / {samples[^1].WorkerFds:0}, maps {samples[0].Maps:0} / {samples[^1].Maps:0}, " +
            $"p99 {samples[0].P99Ms:0.0} / {samples[^1].P99Ms:0.0} ms");

    private static void WriteSamples(string directory, List<SoakSample> samples)
    {
        Directory.CreateDirectory(directory);
        var csv = new StringBuilder("second,host_private_mb,worker_private_mb,host_fds,worker_fds,maps,ops,p99_ms\n");
        foreach (SoakSample s in samples)
        {
            csv.Append(CultureInfo.InvariantCulture, $"{s.Second:0},{s.HostRssMb:0.0},{s.WorkerRssMb:0.0},{s.HostFds:0},{s.WorkerFds:0},{s.Maps:0},{s.Ops},{s.P99Ms:0.00}").Append('\n');
        }

        File.WriteAllText(Path.Combine(directory, "reliability-soak.csv"), csv.ToString());
    }
}

/// <summary>One soak sample, summed over the instances (memory in MB).</summary>
public sealed record SoakSample(double Second, double HostRssMb, double WorkerRssMb, double HostFds, double WorkerFds, double Maps, int Ops, double P99Ms)
{
    /// <inheritdoc />
    public override string ToString() => string.Create(
        CultureInfo.InvariantCulture,
        $"t={Second:0} s: host {HostRssMb:0} MB / {HostFds:0} fds, workers {WorkerRssMb:0} MB / {WorkerFds:0} fds, {Maps:0} maps, {Ops} ops, p99 {P99Ms:0.0} ms");
}
