namespace FaaSCache.Testing;

/// <summary>
/// The reliability suite: fault scenarios with real host processes, then each preset's concurrent history under a SIGKILL,
/// then a bounded soak, one <see cref="ReliabilityRow"/> each. <c>benchmarks/run reliability</c> prints and writes them;
/// the reliability tests run single scenarios in the <see cref="Quick"/> mode and check them with <see cref="Failures"/>.
/// </summary>
public static class ReliabilitySuite
{
    /// <summary>What one mode runs.</summary>
    /// <param name="HistoryOpsPerClient">Operations per client in each preset's history (6 clients).</param>
    /// <param name="TransferMegabytes">Size of the object whose owner dies mid-transfer.</param>
    /// <param name="Soak">How long the soak runs.</param>
    /// <param name="NetworkOpsPerPhase">Operations per client in each phase of the partition and slow-link scenarios.</param>
    /// <param name="StorageRestartPresets">The sync presets under which Azurite is restarted under load, one row each.</param>
    public sealed record Mode(int HistoryOpsPerClient, int TransferMegabytes, TimeSpan Soak, int NetworkOpsPerPhase, IReadOnlyList<string> StorageRestartPresets);

    /// <summary>The quick mode: the one CI runs.</summary>
    public static readonly Mode Quick = new(25, 32, TimeSpan.FromMinutes(3), 10, ["owner"]);

    /// <summary>The full mode.</summary>
    public static readonly Mode Full = new(150, 64, TimeSpan.FromMinutes(30), 40, ["owner", "strong"]);

    /// <summary>How long the clients run before Azurite is stopped, and again after it answers.</summary>
    public static readonly TimeSpan StorageRestartLoad = TimeSpan.FromSeconds(5);

    /// <summary>How long Azurite stays down (connections refused) before it is started again.</summary>
    public static readonly TimeSpan StorageRestartDowntime = TimeSpan.FromSeconds(4);

    /// <summary>Runs every scenario of <paramref name="mode"/> against one Azurite; returns the rows in order and the soak's samples.</summary>
    public static async Task<(List<ReliabilityRow> Rows, IReadOnlyList<SoakSample> Soak)> RunAsync(Mode mode, string resultsDirectory, TextWriter output, CancellationToken cancellation)
    {
        await using AzuriteServer azurite = await AzuriteServer.StartAsync(cancellation);
        output.WriteLine($"azurite {AzuriteServer.InstalledVersion()}: {azurite.BlobEndpoint} (pid {azurite.ProcessId}); load average {MachineLoad.Average()}");
        var rows = new List<ReliabilityRow>();
        async Task Run(string name, Func<Task<ReliabilityRow>> scenario)
        {
            cancellation.ThrowIfCancellationRequested();
            output.WriteLine($"-- {name} (load average {MachineLoad.Average()})");
            var clock = Stopwatch.StartNew();
            ReliabilityRow row = await scenario();
            output.WriteLine($"   {row.ToCsv()} in {clock.Elapsed.TotalSeconds:0.0} s");
            rows.Add(row);
        }

        await Run("owner killed mid-transfer", () => ReliabilityFaults.OwnerKilledMidTransferAsync(azurite, mode.TransferMegabytes, output, cancellation));
        await Run("owner killed after ack", () => ReliabilityFaults.OwnerKilledAfterAckAsync(azurite, 5, output, cancellation));
        await Run("owner killed during write-back", () => ReliabilityFaults.OwnerKilledDuringWriteBackAsync(azurite, 3, output, cancellation));
        await Run("worker killed mid-invocation", () => ReliabilityFaults.WorkerKilledMidInvocationAsync(azurite, output, cancellation));
        await Run("storage frozen under load", () => ReliabilityFaults.StorageFrozenUnderLoadAsync(azurite, TimeSpan.FromSeconds(15), output, cancellation));
        foreach (string preset in mode.StorageRestartPresets)
        {
            await Run($"storage restarted under load ({preset})", () => ReliabilityStorageRestart.RunAsync(azurite, preset, StorageRestartLoad, StorageRestartDowntime, output, cancellation));
        }

        cancellation.ThrowIfCancellationRequested();
        output.WriteLine($"-- partition and slow link in network namespaces (load average {MachineLoad.Average()})");
        rows.AddRange(await ReliabilityNetworkFaults.RunAsync(mode.NetworkOpsPerPhase, output, cancellation));
        output.WriteLine($"   {rows[^2].ToCsv()}; {rows[^1].ToCsv()}");
        await Run("shared memory full", () => ReliabilityShmFull.RunAsync(azurite, output, cancellation));
        int seed = 13;
        foreach (string preset in ReliabilityHistories.Presets)
        {
            await Run($"history {preset}", () => ReliabilityHistories.RunAsync(azurite, preset, mode.HistoryOpsPerClient, seed, output, cancellation));
        }

        IReadOnlyList<SoakSample> soak = [];
        await Run($"soak {mode.Soak.TotalMinutes:0} min", async () =>
        {
            (ReliabilityRow row, soak) = await ReliabilitySoak.RunAsync(azurite, mode.Soak, resultsDirectory, output, cancellation);
            return row;
        });
        return (rows, soak);
    }

    /// <summary>What makes the suite fail: see the class summary. Async presets may lose writes and read stale values.</summary>
    public static IReadOnlyList<string> Failures(IEnumerable<ReliabilityRow> rows)
    {
        var failures = new List<string>();
        foreach (ReliabilityRow row in rows)
        {
            bool asyncPreset = row.Scenario.Contains("Async", StringComparison.Ordinal) || row.Scenario.StartsWith("history-local", StringComparison.Ordinal) || row.Scenario == "history-ownerLocalRead";
            if (row.WritesLost > 0 && !asyncPreset)
            {
                failures.Add($"{row.Scenario}: {row.WritesLost.ToString(CultureInfo.InvariantCulture)} acknowledged writes lost");
            }

            if (row.StaleReads > 0 && (row.Scenario is "history-strong" or "history-owner" || !row.Scenario.StartsWith("history-", StringComparison.Ordinal)) && !asyncPreset)
            {
                failures.Add($"{row.Scenario}: {row.StaleReads.ToString(CultureInfo.InvariantCulture)} stale reads");
            }

            if (row.PartialReads > 0 || row.LeakedMaps > 0 || row.LeakedProcesses > 0)
            {
                failures.Add($"{row.Scenario}: {row.PartialReads.ToString(CultureInfo.InvariantCulture)} partial reads, {row.LeakedMaps.ToString(CultureInfo.InvariantCulture)} leaked maps, {row.LeakedProcesses.ToString(CultureInfo.InvariantCulture)} leaked processes");
            }

            failures.AddRange(row.Notes.Where(n => n.StartsWith("FAILED", StringComparison.Ordinal)).Select(n => $"{row.Scenario}: {n}"));
        }

        return failures;
    }
}
