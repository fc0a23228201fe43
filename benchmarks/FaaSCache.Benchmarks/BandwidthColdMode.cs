using FaaSCache.Host.Admin;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>scaled_cold</c>: one instance running under the scale controller; the planner, with T_Load known, may ask the
/// controller for more, which start while the requester already downloads and take a range each as they join (§4).
/// T_Load is measured before anything is timed: the controller times its first instance's cold start (launch to ready)
/// and passes it down in its vote polls; a warm-up read forced to N=2 then makes a second cold start, whose join lets
/// the requester probe BW_Inst. Before each timed read the controller is back at one instance.
/// </summary>
internal static class BandwidthColdMode
{
    private const long WarmBytes = 40_000_000;
    private const int MaxRetries = 3;
    private static readonly TimeSpan ScaleInTimeout = TimeSpan.FromSeconds(240);
    private static readonly TimeSpan ProfileTimeout = TimeSpan.FromSeconds(120);
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>Measures every size <paramref name="repeats"/> times; the samples go to <paramref name="samples"/>.</summary>
    public static async Task RunAsync(BandwidthRig rig, long[] sizes, int repeats, int maxInstances, List<BandwidthSample> samples, TextWriter output, CancellationToken ct)
    {
        string appName = $"bwc-{Guid.NewGuid().ToString("N")[..8]}";
        await using BandwidthColdRig controller = await BandwidthColdRig.StartAsync(rig.AppDirectory, appName, rig.Azurite, BandwidthScalingBenchmark.StorageRate, maxInstances, ct);
        output.WriteLine(
            $"scale controller pid {controller.ProcessId.ToString(Invariant)}: --min-instances 1 --max-instances {maxInstances.ToString(Invariant)} --netns " +
            $"--link-rate {BandwidthScalingBenchmark.StorageRate.ToString(Invariant)} (its links have one bucket: instance-to-instance traffic is held to 90 MB/s too)");
        ColdInstance one = await controller.WaitForOneAsync(ScaleInTimeout, ct);
        output.WriteLine($"first instance {one.Id} ready at {one.Http.BaseAddress}; T_Load (its launch to ready, measured by the controller) {one.InstanceLoadSeconds:0.00} s");

        // Warm-up: BW_BS alone, then a forced N=2 that cold-starts a second instance; its join lets the probe measure BW_Inst.
        BinaryData warm = Content(WarmBytes, out string warmChecksum);
        string key = await rig.UploadFreshAsync(warm, warmChecksum, one.Id, [one.Id], ct);
        await BandwidthRig.ReadAsync(one.Http, key, 1, ct);
        await rig.ForgetAsync(one.Http, key, ct);
        key = await rig.UploadFreshAsync(warm, warmChecksum, one.Id, [one.Id], ct);
        HostCacheRead forced = await BandwidthRig.ReadAsync(one.Http, key, 2, ct);
        await rig.ForgetAsync(one.Http, key, ct);
        output.WriteLine($"warm-up cold start: a 40 MB read forced to N=2 took {forced.Seconds:0.000} s with n={forced.Instances.ToString(Invariant)} (the second instance starts meanwhile)");
        HostTransferProfile profile = await WaitForProfileAsync(one, ct);
        output.WriteLine($"  {one.Id}: {BandwidthReport.Profile(profile)}");

        foreach (long size in sizes)
        {
            BinaryData content = Content(size, out string checksum);
            for (int repeat = 0, retries = 0; repeat < repeats; repeat++)
            {
                ct.ThrowIfCancellationRequested();
                var wait = Stopwatch.StartNew();
                ColdInstance requester = await controller.WaitForOneAsync(ScaleInTimeout, ct);
                HostTransferProfile p = await BandwidthRig.ProfileAsync(requester.Http, 1, ct);
                key = await rig.UploadFreshAsync(content, checksum, requester.Id, [requester.Id], ct);
                HostCacheRead read;
                try
                {
                    read = await BandwidthRig.ReadAsync(requester.Http, key, null, ct);
                }
                catch (BandwidthRig.NotFreshMissException e) when (retries < MaxRetries)
                {
                    // An instance joined between the controller's "one instance" and the read, and owned the key: the read
                    // measured no fresh miss. Not a sample; wait for one instance again.
                    retries++;
                    output.WriteLine($"{BandwidthReport.SizeLabel(size),7} {"scaled_cold",-14} not a sample, measured again ({retries.ToString(Invariant)} of {MaxRetries.ToString(Invariant)}): {e.Message}; controller: {await controller.StatusLineAsync(ct)}");
                    await rig.ForgetAsync(requester.Http, key, ct);
                    repeat--;
                    continue;
                }

                await rig.ForgetAsync(requester.Http, key, ct);
                samples.Add(new BandwidthSample(size, "scaled_cold", 1, null, read.Seconds, read.Instances, read.Reason));
                output.WriteLine(
                    $"{BandwidthReport.SizeLabel(size),7} {"scaled_cold",-14} {read.Seconds,8:0.000} s  n={read.Instances.ToString(Invariant)}  {size / read.Seconds / 1e6,6:0} MB/s" +
                    $"  (back to one instance after {wait.Elapsed.TotalSeconds:0} s; {requester.Id}: T_Load {p.InstanceLoadSeconds?.ToString("0.00 s", Invariant) ?? "not measured"}, BW_Inst {(p.PeerBytesPerSecond is { } b ? (b / 1e6).ToString("0 MB/s", Invariant) : "not measured")})" +
                    $"  planner: {read.Reason ?? BandwidthReport.PlanReason(size, 1, maxInstances, p)}");
            }
        }
    }

    private static async Task<HostTransferProfile> WaitForProfileAsync(ColdInstance one, CancellationToken ct)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            HostTransferProfile p = await BandwidthRig.ProfileAsync(one.Http, 1, ct);
            if ((p.PeerBytesPerSecond is not null && p.InstanceLoadSeconds is not null) || clock.Elapsed > ProfileTimeout)
            {
                return p;
            }

            await Task.Delay(TimeSpan.FromSeconds(1), ct);
        }
    }

    private static BinaryData Content(long size, out string checksum) => BandwidthScalingBenchmark.Content(size, out checksum);
}
