namespace FaaSCache.Testing;

/// <summary>
/// <c>storage-restarted-under-load</c>: clients read and write registers through every instance while Azurite is stopped
/// (SIGTERM: connections refused, not frozen), left down for a few seconds and started again on the same port and
/// folder. Writes that fail while it is down must fail (not be acknowledged); afterwards every key's history is
/// linearizable with storage's final value, no acknowledged write is lost, no read was stale or partial, and every
/// instance serves again (its storage client, circuit breaker and membership lease all recover).
/// </summary>
public static class ReliabilityStorageRestart
{
    private const int SmallPayload = 1024;
    private const int Clients = 3;
    private const int Keys = 4;

    /// <summary>How long a client waits after a failed operation before its next one.</summary>
    private static readonly TimeSpan FailureBackOff = TimeSpan.FromMilliseconds(250);

    /// <summary>How long the instances may take to see each other again once storage answers (heartbeats every second).</summary>
    private static readonly TimeSpan RejoinTimeout = TimeSpan.FromSeconds(30);

    /// <summary>Runs the scenario under <paramref name="preset"/> (a sync preset: <c>owner</c> or <c>strong</c>).</summary>
    /// <param name="azurite">The suite's Azurite; it is stopped and started again (same port, same data).</param>
    /// <param name="preset">The consistency preset of the instances.</param>
    /// <param name="load">How long the clients run before the stop and again after the restart (each).</param>
    /// <param name="downtime">How long storage stays down (refusing connections) between the stop and the start.</param>
    /// <param name="output">Where the hosts' log and the progress go.</param>
    /// <param name="cancellation">Cancels the scenario.</param>
    public static async Task<ReliabilityRow> RunAsync(AzuriteServer azurite, string preset, TimeSpan load, TimeSpan downtime, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow($"storage-restarted-under-load ({preset})");
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite, preset, 3, output, cancellation);
        var history = new RegisterHistory();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        async Task ClientAsync(int client)
        {
            var random = new Random(client);
            for (int n = 0; !stop.IsCancellationRequested; n++)
            {
                ClusterInstance instance = rig.Cluster[(client + n) % rig.Cluster.Instances.Count];
                string key = $"k{random.Next(Keys).ToString(CultureInfo.InvariantCulture)}";
                RegisterOp op = random.Next(2) == 0
                    ? await ReliabilityRig.WriteAsync(instance, key, $"c{client.ToString(CultureInfo.InvariantCulture)}n{n.ToString(CultureInfo.InvariantCulture)}", SmallPayload, row, history, CancellationToken.None)
                    : await ReliabilityRig.ReadAsync(instance, key, row, history, CancellationToken.None);
                if (!op.Completed)
                {
                    // A client backs off after an error; failed writes (of unknown outcome to the checker) stay few enough to check.
                    await Task.Delay(FailureBackOff, CancellationToken.None);
                }
            }
        }

        long origin = Stopwatch.GetTimestamp();
        Task[] clients = [.. Enumerable.Range(1, Clients).Select(ClientAsync)];
        AzuriteStop stopped;
        long stopAsked, down, upAsked, up;
        try
        {
            await Task.Delay(load, cancellation);
            stopAsked = Stopwatch.GetTimestamp();
            stopped = await azurite.StopAsync(cancellation);
            down = Stopwatch.GetTimestamp();
            await Task.Delay(downtime, cancellation);
            upAsked = Stopwatch.GetTimestamp();
        }
        finally
        {
            // Storage comes back whatever happened: the rest of the suite shares it.
            if (!azurite.IsRunning)
            {
                await azurite.StartAgainAsync(CancellationToken.None);
            }
        }

        up = Stopwatch.GetTimestamp();
        TimeSpan? rejoined = await WaitForFullMembershipAsync(rig, cancellation);
        TimeSpan afterLoad = load - Stopwatch.GetElapsedTime(up);
        if (afterLoad > TimeSpan.Zero)
        {
            await Task.Delay(afterLoad, cancellation);
        }

        await stop.CancelAsync();
        await Task.WhenAll(clients);

        IReadOnlyList<RegisterOp> ops = history.Ops;
        string Ms(long ticks) => Stopwatch.GetElapsedTime(origin, ticks).TotalMilliseconds.ToString("0", CultureInfo.InvariantCulture);
        row.Note($"{stopped}; storage refused connections [{Ms(down)}, {Ms(upAsked)}] ms, answered again at {Ms(up)} ms (SIGTERM sent at {Ms(stopAsked)} ms); same port {azurite.Port.ToString(CultureInfo.InvariantCulture)}, same --location, now pid {azurite.ProcessId.ToString(CultureInfo.InvariantCulture)}");
        if (stopped.Killed)
        {
            row.Note("Azurite had to be SIGKILLed: its metadata of the last 5 s may be lost, so lost writes here may be Azurite's, not the cache's");
        }

        row.Note(rejoined is { } took
            ? $"every instance saw all {rig.Cluster.Instances.Count.ToString(CultureInfo.InvariantCulture)} members again {took.TotalMilliseconds:0} ms after storage answered (membership leases regained)"
            : $"FAILED: {RejoinTimeout.TotalSeconds:0} s after storage answered, some instance still did not see all members (a membership lease lost and not regained)");

        // Wholly inside the outage no write can reach storage: an acknowledgement there is a write the cache kept alone.
        List<RegisterOp> ackedWhileDown = [.. ops.Where(o => o.IsWrite && o.Completed && o.Invoked >= down && o.Returned <= upAsked)];
        if (ackedWhileDown.Count > 0)
        {
            row.Note($"FAILED: {ackedWhileDown.Count.ToString(CultureInfo.InvariantCulture)} writes acknowledged while storage was down under {preset}, e.g. {ackedWhileDown[0]}");
        }

        NoteErrors(row, ops, stopAsked, up, Ms);
        await CheckRegistersAsync(rig, row, ops, origin, cancellation);
        await ReliabilityFaults.StillServesAsync(rig, rig.Cluster.Instances, row, cancellation);
        await rig.FinishAsync(row, output);
        return row;
    }

    /// <summary>
    /// The failures by phase (before the stop, during the outage, after storage answered again), the last failure's time
    /// and the most common error texts: what a function saw while storage was down.
    /// </summary>
    private static void NoteErrors(ReliabilityRow row, IReadOnlyList<RegisterOp> ops, long stopAsked, long up, Func<long, string> ms)
    {
        List<RegisterOp> failed = [.. ops.Where(o => !o.Completed)];
        int before = failed.Count(o => o.Returned < stopAsked);
        int after = failed.Count(o => o.Invoked > up);
        int writes = failed.Count(o => o.IsWrite);
        row.Note(
            $"{failed.Count.ToString(CultureInfo.InvariantCulture)} failed operations ({writes.ToString(CultureInfo.InvariantCulture)} writes, {(failed.Count - writes).ToString(CultureInfo.InvariantCulture)} reads): " +
            $"{before.ToString(CultureInfo.InvariantCulture)} before the stop, {(failed.Count - before - after).ToString(CultureInfo.InvariantCulture)} overlapping the outage, {after.ToString(CultureInfo.InvariantCulture)} begun after storage answered again" +
            $"{(failed.Count > 0 ? $"; last failure returned at {ms(failed.Max(o => o.Returned))} ms" : string.Empty)}");
        int unclear = failed.Count(o => o.IsWrite && (o.Error is null || o.Error.EndsWith(": ", StringComparison.Ordinal)));
        if (unclear > 0)
        {
            row.Note($"FAILED: {unclear.ToString(CultureInfo.InvariantCulture)} failed writes were answered without a reason (an empty error body)");
        }

        foreach (IGrouping<string, RegisterOp> kind in failed.GroupBy(o => $"{(o.IsWrite ? "write" : "read")}: {Shorten(o.Error)}").OrderByDescending(g => g.Count()).Take(4))
        {
            row.Note($"{kind.Count().ToString(CultureInfo.InvariantCulture)} x {kind.Key}");
        }
    }

    /// <summary>Per key: storage's final value appended as a read, then lost writes, stale reads and linearizability.</summary>
    private static async Task CheckRegistersAsync(ReliabilityRig rig, ReliabilityRow row, IReadOnlyList<RegisterOp> ops, long origin, CancellationToken cancellation)
    {
        int keys = 0, linearizable = 0, undecided = 0;
        foreach (IGrouping<string, RegisterOp> key in ops.GroupBy(o => o.Key))
        {
            List<RegisterOp> keyOps = [.. key];
            (string? stored, bool intact) = await rig.StoredAsync(key.Key, cancellation);
            row.PartialReads += intact ? 0 : 1;
            row.WritesLost += RegisterChecker.LostWrites(keyOps, stored).Count;
            IReadOnlyList<RegisterOp> stale = RegisterChecker.StaleReads(keyOps);
            row.StaleReads += stale.Count;
            foreach (RegisterOp read in stale.Take(2))
            {
                row.Note($"stale: {key.Key}: {RegisterChecker.Explain(read, keyOps, origin)}");
            }

            long now = Stopwatch.GetTimestamp();
            LinearizabilityResult check = RegisterChecker.CheckKey([.. keyOps, new RegisterOp(key.Key, false, stored, now, now, true, "storage")]);
            keys++;
            linearizable += check.Linearizable ? 1 : 0;
            undecided += check.Undecided ? 1 : 0;
            if (!check.Linearizable)
            {
                row.Note($"FAILED: {key.Key} ({keyOps.Count.ToString(CultureInfo.InvariantCulture)} ops) is not linearizable; storage holds {stored ?? "nothing"}");
            }
        }

        row.Note($"linearizable keys {linearizable.ToString(CultureInfo.InvariantCulture)}/{keys.ToString(CultureInfo.InvariantCulture)} (storage's final value included){(undecided > 0 ? $", {undecided.ToString(CultureInfo.InvariantCulture)} of them undecided (search bound hit)" : string.Empty)}");
    }

    /// <summary>How long after storage answered every instance saw all members again (null: not within <see cref="RejoinTimeout"/>).</summary>
    private static async Task<TimeSpan?> WaitForFullMembershipAsync(ReliabilityRig rig, CancellationToken cancellation)
    {
        var clock = Stopwatch.StartNew();
        int all = rig.Cluster.Instances.Count;
        while (clock.Elapsed < RejoinTimeout)
        {
            bool full = true;
            foreach (ClusterInstance instance in rig.Cluster.Instances)
            {
                full &= (await instance.Host.GetStatusAsync(cancellation)).MemberIds.Count == all;
            }

            if (full)
            {
                return clock.Elapsed;
            }

            await Task.Delay(100, cancellation);
        }

        return null;
    }

    private static string Shorten(string? error)
    {
        string text = (error ?? "no error text").ReplaceLineEndings(" ");
        return text.Length <= 160 ? text : $"{text[..160]}...";
    }
}
