namespace FaaSCache.Testing;

/// <summary>
/// <c>shared-memory-full</c>: one host whose shared-memory root is a small tmpfs mounted for the scenario (8 MB), asked
/// to write and read more than fits (five 3 MB values): every write is acknowledged and in storage, every read returns the
/// whole value (from storage when no map fits), the host keeps serving, and it leaves nothing in the tmpfs when it stops.
/// Needs root (mount); without it the row says so and counts nothing.
/// </summary>
public static class ReliabilityShmFull
{
    private const int TmpfsMegabytes = 8;
    private const int Values = 5;
    private const int ValueBytes = 3 << 20;

    /// <summary>Runs the scenario.</summary>
    public static async Task<ReliabilityRow> RunAsync(AzuriteServer azurite, TextWriter output, CancellationToken cancellation)
    {
        var row = new ReliabilityRow("shared-memory-full");
        string mount = Path.Combine(Path.GetTempPath(), $"faascache-shmfull-{Guid.NewGuid():N}");
        Directory.CreateDirectory(mount);
        try
        {
            if (await RunToolAsync("mount", ["-t", "tmpfs", "-o", $"size={TmpfsMegabytes.ToString(CultureInfo.InvariantCulture)}m,mode=0700", "tmpfs", mount]) is { } why)
            {
                row.Runs = 0;
                row.Note($"not run: cannot mount a tmpfs ({why})");
                return row;
            }

            try
            {
                await RunAsync(azurite, mount, row, output, cancellation);
            }
            finally
            {
                if (await RunToolAsync("umount", [mount]) is { } failed)
                {
                    row.Note($"FAILED: umount {mount}: {failed} (something still holds it)");
                }
            }
        }
        finally
        {
            Directory.Delete(mount, recursive: true);
        }

        return row;
    }

    private static async Task RunAsync(AzuriteServer azurite, string shmRoot, ReliabilityRow row, TextWriter output, CancellationToken cancellation)
    {
        string suffix = Guid.NewGuid().ToString("N")[..8];
        string container = $"reg-{suffix}";
        await azurite.CreateServiceClient().GetBlobContainerClient(container).CreateIfNotExistsAsync(cancellationToken: cancellation);
        using FunctionAppFolder app = ReliabilityApp.Build(container, "strong");
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shmRoot, cancellationToken: cancellation);
        HostStatus started = await host.WaitForWorkersAsync(cancellationToken: cancellation);
        var pids = new List<int> { host.ProcessId };
        pids.AddRange(started.Workers.Select(w => w.Pid));
        for (int i = 0; i < Values; i++)
        {
            string key = $"full-{i.ToString(CultureInfo.InvariantCulture)}";
            RegisterOp write = await ReliabilityRig.WriteAsync(host, "host", key, $"v{i.ToString(CultureInfo.InvariantCulture)}", ValueBytes, row, null, cancellation);
            RegisterOp read = await ReliabilityRig.ReadAsync(host, "host", key, row, null, cancellation);
            if (write.Completed && read.Value != write.Value)
            {
                row.WritesLost++;
            }
        }

        // Every value again, now that the tmpfs is full: nothing lost, nothing partial.
        for (int i = 0; i < Values; i++)
        {
            string key = $"full-{i.ToString(CultureInfo.InvariantCulture)}";
            RegisterOp read = await ReliabilityRig.ReadAsync(host, "host", key, row, null, cancellation);
            row.WritesLost += read.Value == $"v{i.ToString(CultureInfo.InvariantCulture)}" ? 0 : 1;
        }

        HostStatus status = await host.GetStatusAsync(cancellation);
        string maps = Path.Combine(shmRoot, "AzureFunctions");
        row.Note(
            $"{TmpfsMegabytes.ToString(CultureInfo.InvariantCulture)} MB tmpfs, {Values.ToString(CultureInfo.InvariantCulture)} values of {ValueBytes >> 20} MB written and read twice: " +
            $"{status.SharedMemory.Maps.ToString(CultureInfo.InvariantCulture)} maps held, {status.Count.ObjectsCached.ToString(CultureInfo.InvariantCulture)} objects cached, " +
            $"{status.Invocations.Failed.ToString(CultureInfo.InvariantCulture)} invocations failed");
        int code = await host.StopAsync();
        if (ReliabilityRig.LeaksSecret(host.Output) is { } secret)
        {
            row.Note($"FAILED: the host's log holds {secret}");
        }

        int left = Directory.Exists(maps) ? Directory.EnumerateFiles(maps).Count() : 0;
        row.LeakedMaps += left;
        if (code != 0)
        {
            row.Note($"FAILED: the host exited with {code.ToString(CultureInfo.InvariantCulture)} after SIGTERM");
        }

        var clock = Stopwatch.StartNew();
        while (pids.Any(ReliabilityRig.IsAlive) && clock.Elapsed < ReliabilityRig.ProcessGoneTimeout)
        {
            await Task.Delay(200, cancellation);
        }

        row.LeakedProcesses += pids.Count(ReliabilityRig.IsAlive);
        output.WriteLine($"  shared-memory-full: host exited {code.ToString(CultureInfo.InvariantCulture)}, {left.ToString(CultureInfo.InvariantCulture)} maps left");
    }

    /// <summary>Runs <paramref name="tool"/>; null when it succeeded, else its error output.</summary>
    private static async Task<string?> RunToolAsync(string tool, IReadOnlyList<string> arguments)
    {
        try
        {
            ProcessRun run = await ProcessRun.RunAsync(tool, arguments, TimeSpan.FromMinutes(1));
            return run.ExitCode == 0 ? null : $"exit code {run.ExitCode.ToString(CultureInfo.InvariantCulture)}: {run.Stderr.Trim()}";
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or TimeoutException)
        {
            return e.Message;
        }
    }
}
