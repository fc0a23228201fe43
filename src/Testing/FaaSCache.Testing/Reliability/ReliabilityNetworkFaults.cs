using FaaSCache.NetworkEmulation;

namespace FaaSCache.Testing;

/// <summary>
/// Network faults: 3 instances under <c>owner</c>, each in a network namespace of its own (made and removed here), against
/// an Azurite of their own on 0.0.0.0. <c>partition</c>: instance 3's link goes down (cut from storage, peers and clients)
/// while clients on 1 and 2 write and read keys 3 owned, then the link comes back; the whole history (including reads
/// through 3 after the heal) must be linearizable per key. <c>slow-peer-link</c>: instance 3's link is rate-limited
/// (tbf) while its keys are read and written through the others. <c>lossy-peer-link</c>: the same rate and 5% of instance
/// 3's packets dropped each way by nftables in its namespace (netem, which this kernel lacks, would be the usual tool);
/// delay is not emulated.
/// </summary>
public static class ReliabilityNetworkFaults
{
    private const string Prefix = "fcrel";
    private const int Instances = 3;
    private const int FirstIndex = 199;
    private const int LastIndex = 150;
    private const int Keys = 3;
    private const int PayloadBytes = 1024;
    private const int LossPercent = 5;

    /// <summary>Runs both scenarios on one set of namespaces; returns their rows (a row with 0 runs when namespaces are not supported).</summary>
    public static async Task<IReadOnlyList<ReliabilityRow>> RunAsync(int opsPerPhase, TextWriter output, CancellationToken cancellation)
    {
        var partition = new ReliabilityRow("partition-and-heal (owner)");
        var slow = new ReliabilityRow("slow-peer-link (owner, tbf 4 MB/s)");
        var lossy = new ReliabilityRow($"lossy-peer-link (owner, tbf 4 MB/s, {LossPercent.ToString(CultureInfo.InvariantCulture)}% loss)");
        if (!NetworkNamespace.IsSupported(out string why))
        {
            partition.Runs = slow.Runs = lossy.Runs = 0;
            partition.Note($"not run: {why}");
            slow.Note($"not run: {why}");
            lossy.Note($"not run: {why}");
            return [partition, slow, lossy];
        }

        await NetworkNamespace.CleanupAsync(Prefix);
        var namespaces = new List<NetworkNamespace>();
        await using AzuriteServer azurite = await AzuriteServer.StartAsync("0.0.0.0", cancellation);
        try
        {
            var taken = System.Net.NetworkInformation.NetworkInterface.GetAllNetworkInterfaces()
                .SelectMany(i => i.GetIPProperties().UnicastAddresses).Select(a => a.Address.ToString()).ToHashSet(StringComparer.Ordinal);
            for (int index = FirstIndex; index >= LastIndex && namespaces.Count < Instances; index--)
            {
                if (!taken.Contains(string.Create(CultureInfo.InvariantCulture, $"10.250.{index}.1")))
                {
                    namespaces.Add(await NetworkNamespace.CreateAsync(Prefix, index, ShapedLinkOptions.Unshaped, cancellation));
                }
            }

            await using ReliabilityRig rig = await ReliabilityRig.StartAsync(
                azurite, "owner", Instances, output, cancellation, i => new HostNetwork(namespaces[i].InstanceAddress, namespaces[i].Wrap, azurite.ConnectionStringAt(namespaces[i].HostAddress)));
            ClusterInstance isolated = rig.Cluster[2];
            string[] keys = [.. Enumerable.Range(0, Keys).Select(k => ReliabilityFaults.NameOwnedBy(rig, isolated.Id, $"p{k.ToString(CultureInfo.InvariantCulture)}"))];
            var history = new RegisterHistory();

            // Before: every instance writes and reads the keys 3 owns, so 3 holds them.
            await PhaseAsync(rig, [.. rig.Cluster.Instances], keys, opsPerPhase, "a", partition, history, cancellation);
            await namespaces[2].SetLinkDownAsync(true);
            var clock = Stopwatch.StartNew();
            try
            {
                await PhaseAsync(rig, [rig.Cluster[0], rig.Cluster[1]], keys, opsPerPhase, "b", partition, history, cancellation);
                await rig.Cluster.WaitForMembersAsync([rig.Cluster[0], rig.Cluster[1]], [rig.Cluster[0].Id, rig.Cluster[1].Id], TimeSpan.FromSeconds(30), cancellation);
                await PhaseAsync(rig, [rig.Cluster[0], rig.Cluster[1]], keys, opsPerPhase, "c", partition, history, cancellation);
            }
            finally
            {
                await namespaces[2].SetLinkDownAsync(false);
            }

            partition.Note($"{isolated.Id} cut off for {clock.Elapsed.TotalSeconds:0.0} s (removed from the others' lists meanwhile), then healed");
            TimeSpan rejoined = await rig.Cluster.WaitForMembersAsync(rig.Cluster.Instances, rig.Cluster.Ids, TimeSpan.FromSeconds(60), cancellation);
            partition.Note($"all 3 list each other again {rejoined.TotalSeconds:0.0} s after the heal");
            await PhaseAsync(rig, [.. rig.Cluster.Instances], keys, opsPerPhase, "d", partition, history, cancellation);
            await CheckAsync(rig, keys, history, partition, cancellation);
            await ReliabilityFaults.StillServesAsync(rig, rig.Cluster.Instances, partition, cancellation);

            // Slow link: 4 MB/s each way on 3's link; 1 MB values it owns, read and written through the others.
            await namespaces[2].ReshapeAsync(new ShapedLinkOptions { RateBytesPerSecond = 4 << 20 });
            var slowHistory = new RegisterHistory();
            string[] slowKeys = [.. Enumerable.Range(0, 2).Select(k => ReliabilityFaults.NameOwnedBy(rig, isolated.Id, $"s{k.ToString(CultureInfo.InvariantCulture)}"))];
            clock.Restart();
            await PhaseAsync(rig, [.. rig.Cluster.Instances], slowKeys, opsPerPhase, "s", slow, slowHistory, cancellation, payloadBytes: 1 << 20);
            slow.Note($"{slow.Ops.ToString(CultureInfo.InvariantCulture)} ops of 1 MB over the shaped link in {clock.Elapsed.TotalSeconds:0.0} s; " +
                $"{(NetworkNamespace.IsDelayAndLossSupported(out string noNetem) ? "netem delay available but not used" : $"delay not run: {noNetem}")}; loss: the lossy-peer-link row");
            await CheckAsync(rig, slowKeys, slowHistory, slow, cancellation);

            // Lossy link: the same rate limit, and nftables in 3's namespace drops LossPercent % of its packets each way
            // (netem's loss without netem); 256 KB values it owns, read and written through all three.
            await namespaces[2].SetPacketLossAsync(LossPercent);
            var lossyHistory = new RegisterHistory();
            string[] lossyKeys = [.. Enumerable.Range(0, 2).Select(k => ReliabilityFaults.NameOwnedBy(rig, isolated.Id, $"l{k.ToString(CultureInfo.InvariantCulture)}"))];
            clock.Restart();
            try
            {
                await PhaseAsync(rig, [.. rig.Cluster.Instances], lossyKeys, opsPerPhase, "l", lossy, lossyHistory, cancellation, payloadBytes: 256 << 10);
            }
            finally
            {
                await namespaces[2].SetPacketLossAsync(0);
            }

            lossy.Note($"{lossy.Ops.ToString(CultureInfo.InvariantCulture)} ops of 256 KB with {LossPercent.ToString(CultureInfo.InvariantCulture)}% of 3's packets dropped each way (nftables numgen) over tbf 4 MB/s in {clock.Elapsed.TotalSeconds:0.0} s");
            await CheckAsync(rig, lossyKeys, lossyHistory, lossy, cancellation);
            await ReliabilityFaults.StillServesAsync(rig, rig.Cluster.Instances, lossy, cancellation);
            await rig.FinishAsync(partition, output);
        }
        finally
        {
            foreach (NetworkNamespace network in namespaces)
            {
                await network.DisposeAsync();
            }
        }

        return [partition, slow, lossy];
    }

    private static async Task PhaseAsync(
        ReliabilityRig rig, ClusterInstance[] through, string[] keys, int ops, string tag, ReliabilityRow row, RegisterHistory history, CancellationToken cancellation, int payloadBytes = PayloadBytes)
    {
        await Task.WhenAll(through.Select(async (instance, client) =>
        {
            var random = new Random(client + tag.GetHashCode(StringComparison.Ordinal));
            for (int n = 0; n < ops; n++)
            {
                string key = keys[random.Next(keys.Length)];
                _ = random.Next(2) == 0
                    ? await ReliabilityRig.WriteAsync(instance, key, $"{tag}{client.ToString(CultureInfo.InvariantCulture)}n{n.ToString(CultureInfo.InvariantCulture)}", payloadBytes, row, history, cancellation)
                    : await ReliabilityRig.ReadAsync(instance, key, row, history, cancellation);
            }
        }));
    }

    private static async Task CheckAsync(ReliabilityRig rig, string[] keys, RegisterHistory history, ReliabilityRow row, CancellationToken cancellation)
    {
        int bad = 0;
        foreach (string key in keys)
        {
            List<RegisterOp> ops = [.. history.Ops.Where(o => o.Key == key)];
            (string? stored, bool intact) = await rig.StoredAsync(key, cancellation);
            row.PartialReads += intact ? 0 : 1;
            IReadOnlyList<RegisterOp> stale = RegisterChecker.StaleReads(ops);
            row.StaleReads += stale.Count;
            foreach (RegisterOp read in stale.Take(2))
            {
                row.Note($"stale: {key}: {RegisterChecker.Explain(read, ops, history.Ops[0].Invoked)}");
            }

            row.WritesLost += RegisterChecker.LostWrites(ops, stored).Count;
            long now = Stopwatch.GetTimestamp();
            bad += RegisterChecker.CheckKey([.. ops, new RegisterOp(key, false, stored, now, now, true, "storage")]).Linearizable ? 0 : 1;
        }

        row.Note($"linearizable keys {(keys.Length - bad).ToString(CultureInfo.InvariantCulture)}/{keys.Length.ToString(CultureInfo.InvariantCulture)}");
        if (bad > 0)
        {
            row.Note("FAILED: owner must be linearizable per key");
        }
    }
}
