using FaaSCache.Bandwidth;
using FaaSCache.Host.Admin;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>bandwidth-scaling</c>: the paper's Fig. 12 on this machine. Each host instance runs in a network namespace whose
/// link is shaped to 90 MB/s towards Azurite (§6's per-instance storage bandwidth) and to <see cref="InstanceRate"/>
/// towards the other instances; a fresh miss of 400 KB .. 800 MB is read on instance 1 (which owns the key) with one
/// instance running (<c>single</c>), with six running and the planner choosing N (<c>scaled_running</c>), and with six
/// running and every N from 1 to 6 forced (<c>fixed</c>), and with one instance under the scale controller, which starts
/// more when the planner asks (<c>scaled_cold</c>, <see cref="BandwidthColdMode"/>). Times are the host's own
/// (<c>POST /admin/cache/read</c>).
/// </summary>
internal static class BandwidthScalingBenchmark
{
    /// <summary>§6: "I/O bandwidth to remote storage ... is 90MB/s for large objects".</summary>
    public const long StorageRate = 90_000_000;

    /// <summary>
    /// Instance to instance: the paper's BW_Inst (750 MB/s), far above BW_BS; on this machine the peers' gRPC streams
    /// are CPU-bound well below it, so the shaping only keeps it from being unbounded loopback.
    /// </summary>
    public const long InstanceRate = 750_000_000;

    /// <summary>The instances of the scaled and fixed modes.</summary>
    public const int Instances = 6;

    private const long WarmBytes = 40_000_000;

    /// <summary>The fixed N measured twice (<c>fixed_again</c>): the A/A pairs whose spread is the planner comparison's floor.</summary>
    public static readonly int[] AgainNs = [5, 6];

    // The cold rig waits for its helpers to scale in between loads (up to a minute each): three samples, as before.
    private const int ColdRepeats = 3;
    private static readonly TimeSpan SettleTime = BandwidthRig.ProfileInterval * 3;
    private static readonly long[] FullSizes = [400_000, 40_000_000, 400_000_000, 800_000_000];
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    public static async Task RunAsync(BenchmarkContext context)
    {
        TextWriter output = context.Output;
        CancellationToken ct = context.Cancellation;
        var wall = Stopwatch.StartNew();
        long[] sizes = context.Quick ? FullSizes[..3] : FullSizes;
        // Five fresh misses per cell in both: one sample per cell moved a cell by 20% between runs, and the best fixed N
        // (the least of six such samples) then beat any one planned sample; with three, the machine's drift over a run
        // (400 MB loads 1.1-1.3 s early, 1.4-1.7 s late in one run) still decided the comparison: 8 interleaved pairs of
        // the planned N=5 and a forced N=5 gave medians 1.24 s and 1.42 s, where three repeats had put the planned one
        // 1.13x behind (issue 36).
        int repeats = 5;
        context.WriteHeader("bandwidth-scaling");
        var link = new ShapedLinkOptions { RateBytesPerSecond = StorageRate, InstanceRateBytesPerSecond = InstanceRate };
        output.WriteLine($"link per instance: {link} (tc tbf on a veth pair, both directions; the benchmark's own uploads to Azurite are over loopback, unshaped)");
        output.WriteLine($"sizes {string.Join(", ", sizes.Select(BandwidthReport.SizeLabel))}; {repeats.ToString(Invariant)} fresh miss(es) per size and mode, median reported; load average {MachineLoad.Average()}");

        await using BandwidthRig rig = await BandwidthRig.StartAsync(link, output, ct);
        var samples = new List<BandwidthSample>();
        string appName = $"bw-{Guid.NewGuid().ToString("N")[..8]}";

        // single: one instance, alone in its app.
        HostProcessCluster cluster = await rig.StartClusterAsync(appName, 1, ct);
        ClusterInstance requester = cluster[0];
        output.WriteLine($"started 1 instance: {requester.Id} pid {requester.Host.ProcessId.ToString(Invariant)} at {requester.Host.BaseUri}");
        await WarmAsync(rig, output, ct);
        await MeasureAsync(rig, sizes, repeats, [new("single", 1)], samples, output, ct);

        // scaled_running and fixed: five more instances join the same app, each in its own namespace.
        for (int i = 1; i < Instances; i++)
        {
            await rig.JoinAsync(ct);
        }

        output.WriteLine($"{Instances.ToString(Invariant)} instances running: {string.Join(", ", cluster.Instances.Select(i => $"{i.Id} at {i.Host.BaseUri}"))}");
        await WarmAsync(rig, output, ct);
        // fixed_again: N=5 and N=6 a second time, as cells of their own in the same interleaved order: the same code twice,
        // so their ratio to the fixed cells is this comparison's own floor (issue 36: the planner's N=5 loads and the fixed
        // N=5 cell differed by 17% in one run).
        List<ModeRun> modes = [new("scaled_running", null), .. Enumerable.Range(1, Instances).Select(n => new ModeRun("fixed", n)), .. AgainNs.Select(n => new ModeRun("fixed_again", n))];
        await MeasureAsync(rig, sizes, repeats, modes, samples, output, ct);
        await rig.StopClusterAsync();

        // scaled_cold: one instance under the scale controller, which starts more when the planner asks.
        try
        {
            await BandwidthColdMode.RunAsync(rig, sizes, ColdRepeats, Instances, samples, output, ct);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // The other modes' numbers stand without it: say why it is missing rather than lose them.
            output.WriteLine($"scaled_cold FAILED, left out of the table: {e}");
        }

        output.WriteLine();
        BandwidthReport.Print(output, samples, sizes);
        string csv = BandwidthReport.WriteCsv(context.ResultsDirectory, samples);
        output.WriteLine();
        output.WriteLine($"wrote {csv}");
        output.WriteLine($"wall time {wall.Elapsed.TotalSeconds:0} s; load average at the end {MachineLoad.Average()}");
    }

    /// <summary>
    /// Warms the profile as the instances would in service: with more than one running, three profile intervals idle (the
    /// peer probes measure BW_Inst again after start-up), then a 40 MB miss read alone on each instance (BW_BS and storage
    /// latency over its own link) and one 40 MB miss shared by all; prints it.
    /// </summary>
    private static async Task WarmAsync(BandwidthRig rig, TextWriter output, CancellationToken ct)
    {
        HostProcessCluster cluster = rig.Cluster!;
        if (cluster.Instances.Count > 1)
        {
            // Several profile intervals with the instances idle: the peer probes run again once start-up is over (EWMA).
            await Task.Delay(SettleTime, ct);
        }

        BinaryData content = Content(WarmBytes, out string checksum);
        foreach (ClusterInstance instance in cluster.Instances)
        {
            string key = await rig.UploadFreshAsync(content, checksum, instance.Id, cluster.Ids, ct);
            await BandwidthRig.ReadAsync(instance.Host.Http, key, 1, ct);
            await rig.ForgetAsync(instance.Host.Http, key, ct);
        }

        if (cluster.Instances.Count > 1)
        {
            string key = await rig.UploadFreshAsync(content, checksum, cluster[0].Id, cluster.Ids, ct);
            await BandwidthRig.ReadAsync(cluster[0].Host.Http, key, cluster.Instances.Count, ct);
            await rig.ForgetAsync(cluster[0].Host.Http, key, ct);
        }

        output.WriteLine($"profile after warm-up ({cluster.Instances.Count.ToString(Invariant)} running):");
        foreach (ClusterInstance instance in cluster.Instances)
        {
            HostTransferProfile p = await BandwidthRig.ProfileAsync(instance.Host.Http, cluster.Instances.Count, ct);
            output.WriteLine($"  {instance.Id}: {BandwidthReport.Profile(p)}");
        }
    }

    /// <summary>Every size, every repeat, every mode in turn (interleaved, so drift in the machine's load spreads over all).</summary>
    private static async Task MeasureAsync(BandwidthRig rig, long[] sizes, int repeats, IReadOnlyList<ModeRun> modes, List<BandwidthSample> samples, TextWriter output, CancellationToken ct)
    {
        HostProcessCluster cluster = rig.Cluster!;
        ClusterInstance requester = cluster[0];
        foreach (long size in sizes)
        {
            BinaryData content = Content(size, out string checksum);
            if (ScaledLoadModel.Splits(size))
            {
                // Untimed, split over every instance: the first map of a size after a while is written into fresh tmpfs
                // pages (on this VM a page the hypervisor took back costs far more than a kept one), which capped the
                // requester's whole load at about half the link rate, its own storage stream included (issue 36's
                // per-range timings). Every timed mode then starts as the others do, with that size's file kept.
                string warm = await rig.UploadFreshAsync(content, checksum, requester.Id, cluster.Ids, ct);
                HostCacheRead warmed = await BandwidthRig.ReadAsync(requester.Host.Http, warm, cluster.Instances.Count, ct);
                await rig.ForgetAsync(requester.Host.Http, warm, ct);
                output.WriteLine(string.Create(Invariant, $"{BandwidthReport.SizeLabel(size),7} warm-up (untimed, N={warmed.Instances}): {warmed.Seconds:0.000} s"));
            }

            for (int repeat = 0; repeat < repeats; repeat++)
            {
                // Each repeat in an order of its own (seeded): the planned and the fixed rows were always run in the same
                // order, and the first split after another kind of load ran slower in every range (issue 36), which
                // always fell on the planner's row.
                var order = new Random(unchecked((int)(size % 1_000_003) * 31 + repeat));
                foreach (ModeRun mode in modes.OrderBy(_ => order.Next()))
                {
                    ct.ThrowIfCancellationRequested();
                    string key = await rig.UploadFreshAsync(content, checksum, requester.Id, cluster.Ids, ct);
                    HostTransferProfile before = await BandwidthRig.ProfileAsync(requester.Host.Http, cluster.Instances.Count, ct);
                    HostCacheRead read = await BandwidthRig.ReadAsync(requester.Host.Http, key, mode.Forced, ct);
                    await rig.ForgetAsync(requester.Host.Http, key, ct);
                    var sample = new BandwidthSample(size, mode.Mode, cluster.Instances.Count, mode.Forced, read.Seconds, read.Instances, read.Reason);
                    samples.Add(sample);
                    output.WriteLine(
                        $"{BandwidthReport.SizeLabel(size),7} {mode.Label,-14} {read.Seconds,8:0.000} s  n={read.Instances.ToString(Invariant)}" +
                        $"  {size / read.Seconds / 1e6,6:0} MB/s{(read.TakenBack > 0 ? $"  {read.TakenBack.ToString(Invariant)} range(s) taken back" : string.Empty)}" +
                        $"{(mode.Forced is null ? "  planner: " + (read.Reason ?? BandwidthReport.PlanReason(size, cluster.Instances.Count, BandwidthScaler.DEFAULT_MAX_INSTANCES, before)) : string.Empty)}");
                    // Where the load's time went (issue 36): each range's instance, bytes, ask, first byte and end.
                    foreach (ScaledLoadRange range in read.Ranges ?? [])
                    {
                        output.WriteLine(string.Create(Invariant,
                            $"          {range.Instance,-20} {range.Bytes / 1e6,7:0.0} MB at {range.Offset / 1e6,7:0.0}  asked {range.StartMs,7:0} ms  first byte {range.FirstByteMs,7:0} ms  done {range.EndMs,7:0} ms  {range.MegabytesPerSecond,5:0} MB/s"));
                    }
                }
            }
        }
    }

    /// <summary>Random bytes of <paramref name="size"/> and their whole-object XxHash3 (the metadata a scaled load checks).</summary>
    public static BinaryData Content(long size, out string checksum)
    {
        var bytes = new byte[size];
        new Random(unchecked((int)size)).NextBytes(bytes);
        checksum = BlobChecksum.Format(BlobChecksum.Of(bytes));
        return new BinaryData(bytes);
    }

    /// <summary>One mode to measure: its CSV name and the N it forces (null: the planner decides).</summary>
    private sealed record ModeRun(string Mode, int? Forced)
    {
        public string Label => Forced is { } n && Mode is "fixed" or "fixed_again" ? string.Create(CultureInfo.InvariantCulture, $"{(Mode == "fixed" ? "fixed" : "again")} N={n}") : Mode;
    }
}
