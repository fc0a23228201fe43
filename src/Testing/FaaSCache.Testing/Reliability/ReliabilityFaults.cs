namespace FaaSCache.Testing;

/// <summary>
/// Fault scenarios with real processes on loopback, one row each. After every fault: acknowledged writes under a sync
/// preset are in storage, reads fall back to storage, no read is partial, the survivors still serve, and the end-of-run
/// checks of <see cref="ReliabilityRig.FinishAsync"/> find no map or process left.
/// </summary>
public static class ReliabilityFaults
{
    private const int SmallPayload = 1024;

    /// <summary>
    /// <c>owner-killed-mid-transfer</c> (strong): a reader asks the owner for a large object it holds; once the reader's
    /// map for it appears the owner is SIGKILLed. The read must succeed, intact, from storage.
    /// </summary>
    public static async Task<ReliabilityRow> OwnerKilledMidTransferAsync(AzuriteServer azurite, int megabytes, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("owner-killed-mid-transfer");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "strong", 3, output, cancellation);
        ClusterInstance reader = rig.Cluster[0], owner = rig.Cluster[1], other = rig.Cluster[2];
        string key = NameOwnedBy(rig, owner.Id, "big");
        await ReliabilityRig.WriteAsync(owner, key, "v1", megabytes << 20, row, null, cancellation);
        await ReliabilityRig.ReadAsync(owner, key, row, null, cancellation);

        // A new map in the reader's folder is the transfer under way. The owner is stopped (SIGSTOP) before the read and
        // let run a millisecond at a time until that map appears, then killed while stopped: a transfer that takes tens
        // of milliseconds on loopback cannot finish between the map's appearance and the kill, however late this looks.
        var before = Directory.EnumerateFiles(reader.MapDirectory).ToHashSet(StringComparer.Ordinal);
        await rig.TrackProcessesAsync(cancellation);
        ProcessSignals.Send(owner.Host.ProcessId, ProcessSignals.Stop);
        var clock = Stopwatch.StartNew();
        Task<RegisterOp> reading = ReliabilityRig.ReadAsync(reader, key, row, null, cancellation);
        string? missed = null;
        try
        {
            await Task.Factory.StartNew(
                () => ProcessSignals.StepUntil(
                    owner.Host.ProcessId,
                    () => Directory.EnumerateFiles(reader.MapDirectory).Any(f => !before.Contains(f)),
                    () => reading.IsCompleted,
                    TimeSpan.FromSeconds(60)),
                cancellation, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        }
        catch (Exception e) when (e is InvalidOperationException or TimeoutException)
        {
            missed = e.Message;
        }

        rig.Kill(owner);
        RegisterOp read = await reading;
        row.Note(missed is null
            ? $"owner {owner.Id} SIGKILLed {clock.Elapsed.TotalMilliseconds:0} ms into a {megabytes.ToString(CultureInfo.InvariantCulture)} MB remote read; the read {(read.Completed && read.Value == "v1" ? "got the whole object" : "FAILED")}"
            : $"FAILED: the owner could not be killed mid-transfer, so the fault did not happen ({missed})");
        if (!read.Completed || read.Value != "v1")
        {
            row.WritesLost++;
        }

        await StillServesAsync(rig, [reader, other], row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>
    /// <c>owner-killed-after-ack</c> (owner, sync write-back): writes through one instance to keys another owns, SIGKILLs
    /// the owner right after the last acknowledgement; storage must hold every last acknowledged value.
    /// </summary>
    public static async Task<ReliabilityRow> OwnerKilledAfterAckAsync(AzuriteServer azurite, int writes, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("owner-killed-after-ack (owner)");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "owner", 3, output, cancellation);
        ClusterInstance writer = rig.Cluster[0], owner = rig.Cluster[1], other = rig.Cluster[2];
        string key = NameOwnedBy(rig, owner.Id, "ledger");
        string? lastAcked = await WriteInTurnAsync(writer, key, "w", writes, row, cancellation);
        await rig.TrackProcessesAsync(cancellation);
        rig.Kill(owner);
        (string? stored, bool intact) = await rig.StoredAsync(key, cancellation);
        row.WritesLost += stored == lastAcked ? 0 : 1;
        row.PartialReads += intact ? 0 : 1;
        RegisterOp read = await ReliabilityRig.ReadAsync(other, key, row, null, cancellation);
        row.StaleReads += read.Completed && read.Value != lastAcked ? 1 : 0;
        row.Note($"last acknowledged {lastAcked}; storage holds {stored ?? "nothing"}; a read through {other.Id} after the kill got {read.Value ?? "nothing"}");
        await StillServesAsync(rig, [writer, other], row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>
    /// <c>owner-killed-during-write-back (ownerAsync)</c>: storage frozen (SIGSTOP to Azurite), writes acknowledged by the
    /// owner before storage has them, then the owner is SIGKILLed and storage thawed. Under an async preset these writes
    /// are lost by design (the paper's trade-off): the row counts them; the survivors must still serve and fall back.
    /// </summary>
    public static async Task<ReliabilityRow> OwnerKilledDuringWriteBackAsync(AzuriteServer azurite, int writes, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("owner-killed-during-write-back (ownerAsync)");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "ownerAsync", 3, output, cancellation);
        ClusterInstance writer = rig.Cluster[0], owner = rig.Cluster[1], other = rig.Cluster[2];
        string key = NameOwnedBy(rig, owner.Id, "journal");
        await ReliabilityRig.WriteAsync(writer, key, "base", SmallPayload, row, null, cancellation);
        await WaitNoPendingAsync(owner, cancellation);
        string? lastAcked;
        long pending;
        ProcessSignals.Send(azurite.ProcessId, ProcessSignals.Stop);
        try
        {
            lastAcked = await WriteInTurnAsync(writer, key, "a", writes, row, cancellation);
            pending = (await owner.Host.GetStatusAsync(cancellation)).PendingWrites;
            await rig.TrackProcessesAsync(cancellation);
            rig.Kill(owner);
            await owner.Host.WaitForExitAsync(TimeSpan.FromSeconds(10));
        }
        finally
        {
            ProcessSignals.Send(azurite.ProcessId, ProcessSignals.Continue);
        }

        (string? stored, bool intact) = await rig.StoredAsync(key, cancellation);
        row.WritesLost += stored == lastAcked ? 0 : 1;
        row.PartialReads += intact ? 0 : 1;
        row.Note($"{pending.ToString(CultureInfo.InvariantCulture)} writes pending at the owner when it was killed (expected: ownerAsync acknowledges before storage); last acknowledged {lastAcked}, storage holds {stored ?? "nothing"}");
        await StillServesAsync(rig, [writer, other], row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>
    /// <c>worker-killed-mid-invocation</c>: a 5 s invocation runs on instance 1; its Python worker is SIGKILLed 1 s in.
    /// That invocation fails (counted as an error, expected); the host restarts the worker and serves the next ones.
    /// </summary>
    public static async Task<ReliabilityRow> WorkerKilledMidInvocationAsync(AzuriteServer azurite, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("worker-killed-mid-invocation");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "owner", 1, output, cancellation);
        ClusterInstance host = rig.Cluster[0];
        await ReliabilityRig.WriteAsync(host, "k", "before", SmallPayload, row, null, cancellation);
        HostWorkerStatus worker = (await host.Host.GetStatusAsync(cancellation)).Worker("python");
        long invoked = Stopwatch.GetTimestamp();
        Task<HttpResponseMessage> slow = host.Host.Http.PostAsync("api/Slow?ms=5000", null, cancellation);
        await Task.Delay(TimeSpan.FromSeconds(1), cancellation);
        ProcessSignals.Send(worker.Pid, ProcessSignals.Kill);
        bool slowOk;
        try
        {
            using HttpResponseMessage response = await slow;
            slowOk = response.IsSuccessStatusCode;
            row.Note($"the interrupted invocation answered {(int)response.StatusCode} after {Stopwatch.GetElapsedTime(invoked).TotalSeconds:0.0} s");
        }
        catch (HttpRequestException e)
        {
            slowOk = false;
            row.Note($"the interrupted invocation got no answer: {e.Message}");
        }

        row.Ops++;
        row.Errors += slowOk ? 0 : 1;
        HostStatus status = await host.Host.WaitForWorkersAsync(cancellationToken: cancellation);
        await rig.TrackProcessesAsync(cancellation);
        RegisterOp read = await ReliabilityRig.ReadAsync(host, "k", row, null, cancellation);
        row.StaleReads += read.Completed && read.Value != "before" ? 1 : 0;
        row.Note($"worker pid {worker.Pid.ToString(CultureInfo.InvariantCulture)} killed; now pid {status.Worker("python").Pid.ToString(CultureInfo.InvariantCulture)}, {status.Worker("python").Restarts.ToString(CultureInfo.InvariantCulture)} restarts; old worker alive: {ReliabilityRig.IsAlive(worker.Pid)}");
        await StillServesAsync(rig, [host], row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>
    /// <c>storage-frozen-under-load</c> (owner): two clients read and write while Azurite is SIGSTOPped for 5 s and resumed.
    /// Operations during the freeze may fail or wait; afterwards every key's last acknowledged value is in storage.
    /// </summary>
    public static async Task<ReliabilityRow> StorageFrozenUnderLoadAsync(AzuriteServer azurite, TimeSpan load, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("storage-frozen-under-load (owner)");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, "owner", 3, output, cancellation);
        var history = new RegisterHistory();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        async Task ClientAsync(int client)
        {
            var random = new Random(client);
            for (int n = 0; !stop.IsCancellationRequested; n++)
            {
                ClusterInstance instance = rig.Cluster[(client + n) % 3];
                string key = $"k{random.Next(4).ToString(CultureInfo.InvariantCulture)}";
                _ = random.Next(2) == 0
                    ? await ReliabilityRig.WriteAsync(instance, key, $"c{client.ToString(CultureInfo.InvariantCulture)}n{n.ToString(CultureInfo.InvariantCulture)}", SmallPayload, row, history, CancellationToken.None)
                    : await ReliabilityRig.ReadAsync(instance, key, row, history, CancellationToken.None);
            }
        }

        Task[] clients = [ClientAsync(1), ClientAsync(2)];
        await Task.Delay(load / 3, cancellation);
        long frozen = Stopwatch.GetTimestamp();
        ProcessSignals.Send(azurite.ProcessId, ProcessSignals.Stop);
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(5), cancellation);
        }
        finally
        {
            ProcessSignals.Send(azurite.ProcessId, ProcessSignals.Continue);
        }

        long thawed = Stopwatch.GetTimestamp();
        await Task.Delay(load / 3, cancellation);
        await stop.CancelAsync();
        await Task.WhenAll(clients);
        foreach (IGrouping<string, RegisterOp> ops in history.Ops.GroupBy(o => o.Key))
        {
            (string? stored, bool intact) = await rig.StoredAsync(ops.Key, cancellation);
            row.PartialReads += intact ? 0 : 1;
            row.WritesLost += RegisterChecker.LostWrites([.. ops], stored).Count;
            IReadOnlyList<RegisterOp> stale = RegisterChecker.StaleReads([.. ops]);
            row.StaleReads += stale.Count;
            foreach (RegisterOp read in stale.Take(2))
            {
                row.Note($"stale: {ops.Key}: {RegisterChecker.Explain(read, [.. ops], history.Ops.Min(o => o.Invoked))}");
            }

        }

        long origin = history.Ops.Min(o => o.Invoked);
        row.Note($"storage frozen [{Stopwatch.GetElapsedTime(origin, frozen).TotalMilliseconds:0}, {Stopwatch.GetElapsedTime(origin, thawed).TotalMilliseconds:0}] ms");
        row.Note("Azurite SIGSTOPped for 5 s mid-load (a frozen storage: requests hang; storage stopped and restarted is the storage-restarted-under-load row)");
        await StillServesAsync(rig, rig.Cluster.Instances, row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>After a fault: one write and one read through each of <paramref name="survivors"/> must succeed.</summary>
    public static async Task StillServesAsync(ReliabilityRig rig, IEnumerable<ClusterInstance> survivors, ReliabilityRow row, CancellationToken cancellation)
    {
        foreach (ClusterInstance instance in survivors)
        {
            string key = $"alive-{instance.Id}";
            RegisterOp write = await ReliabilityRig.WriteAsync(instance, key, "alive", SmallPayload, row, null, cancellation);
            RegisterOp read = await ReliabilityRig.ReadAsync(instance, key, row, null, cancellation);
            if (!write.Completed || read.Value != "alive")
            {
                row.Note($"FAILED: {instance.Id} does not serve after the fault (write ok: {write.Completed}, read {read.Value ?? "nothing"})");
            }
        }
    }

    /// <summary>A register name whose key <paramref name="owner"/> owns.</summary>
    public static string NameOwnedBy(ReliabilityRig rig, string owner, string prefix)
    {
        for (int k = 0; k < 10_000; k++)
        {
            string name = $"{prefix}-{k.ToString(CultureInfo.InvariantCulture)}";
            if (rig.Cluster.OwnerOf($"{rig.Container.Name}/{name}") == owner)
            {
                return name;
            }
        }

        throw new InvalidOperationException($"No name {prefix}-k is owned by {owner}.");
    }

    /// <summary>
    /// Writes <c>&lt;prefix&gt;0</c> .. <c>&lt;prefix&gt;N-1</c> to <paramref name="key"/> through <paramref name="writer"/>, one
    /// after the other; returns the last value acknowledged (null when none was).
    /// </summary>
    private static async Task<string?> WriteInTurnAsync(ClusterInstance writer, string key, string prefix, int writes, ReliabilityRow row, CancellationToken cancellation)
    {
        string? lastAcked = null;
        for (int i = 0; i < writes; i++)
        {
            RegisterOp op = await ReliabilityRig.WriteAsync(writer, key, prefix + i.ToString(CultureInfo.InvariantCulture), SmallPayload, row, null, cancellation);
            lastAcked = op.Completed ? op.Value : lastAcked;
        }

        return lastAcked;
    }

    private static async Task WaitNoPendingAsync(ClusterInstance instance, CancellationToken cancellation)
    {
        var clock = Stopwatch.StartNew();
        while ((await instance.Host.GetStatusAsync(cancellation)).PendingWrites > 0 && clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            await Task.Delay(50, cancellation);
        }
    }
}
