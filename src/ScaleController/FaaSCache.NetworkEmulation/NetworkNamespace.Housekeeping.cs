namespace FaaSCache.NetworkEmulation;

/// <summary>Whether this machine can emulate links, and removal of what a run left behind.</summary>
public sealed partial class NetworkNamespace
{
    private static readonly Lazy<string?> UnsupportedReason = new(ProbeSupport, LazyThreadSafetyMode.ExecutionAndPublication);
    private static readonly Lazy<string?> NetemUnsupportedReason = new(ProbeNetem, LazyThreadSafetyMode.ExecutionAndPublication);

    /// <summary>
    /// True when this machine can make shaped links: the process is root, <c>ip</c> and <c>tc</c> are installed, and a
    /// namespace, a veth pair, an ifb device and the qdiscs can really be made (probed once, then removed).
    /// </summary>
    /// <param name="why">When false, what is missing and how to get it; empty when true.</param>
    public static bool IsSupported(out string why)
    {
        why = UnsupportedReason.Value ?? string.Empty;
        return UnsupportedReason.Value is null;
    }

    /// <summary>
    /// True when <see cref="ShapedLinkOptions.Delay"/> and <see cref="ShapedLinkOptions.LossPercent"/> can be applied: they
    /// need tc's netem qdisc, which some kernels are built without (CONFIG_NET_SCH_NETEM); rates need only tbf.
    /// </summary>
    /// <param name="why">When false, what is missing; empty when true.</param>
    public static bool IsDelayAndLossSupported(out string why)
    {
        why = NetemUnsupportedReason.Value ?? string.Empty;
        return NetemUnsupportedReason.Value is null;
    }

    /// <summary>
    /// Removes every namespace (killing the processes inside) and interface made with <paramref name="prefix"/>, e.g.
    /// after a run that was killed; names of other prefixes are never touched. Throws if something could not be removed.
    /// </summary>
    public static async Task CleanupAsync(string prefix)
    {
        NetworkNames.ValidatePrefix(prefix);
        var errors = new List<string>();
        var namespacePattern = NetworkNames.NamespacePattern(prefix);
        var interfacePattern = NetworkNames.InterfacePattern(prefix);

        var links = await CommandRunner.RunAsync("ip", ["-o", "link", "show"], CancellationToken.None).ConfigureAwait(false);
        foreach (var name in ParseLinkNames(links).Where(n => interfacePattern.IsMatch(n)).Order(StringComparer.Ordinal))
        {
            // 'a' sorts before 'b': deleting the root end usually removes its peer, which is then simply gone.
            await DeleteLinkAsync(name, errors).ConfigureAwait(false);
        }

        var namespaces = await CommandRunner.RunAsync("ip", ["netns", "list"], CancellationToken.None).ConfigureAwait(false);
        foreach (var name in ParseNamespaceNames(namespaces).Where(n => namespacePattern.IsMatch(n)))
        {
            await KillProcessesInNamespaceAsync(name, errors).ConfigureAwait(false);
            await DeleteNamespaceAsync(name, errors).ConfigureAwait(false);
        }

        if (errors.Count > 0)
        {
            throw new NetworkEmulationException($"cleaning up prefix '{prefix}' left something behind: {string.Join("; ", errors)}");
        }
    }

    /// <summary>The interface names in <c>ip -o link show</c> output ("5: name@peer: &lt;...&gt;").</summary>
    internal static IEnumerable<string> ParseLinkNames(string output)
    {
        foreach (var line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            var fields = line.Split(':', 3);
            if (fields.Length >= 2)
            {
                var name = fields[1].Trim();
                var at = name.IndexOf('@', StringComparison.Ordinal);
                yield return at >= 0 ? name[..at] : name;
            }
        }
    }

    /// <summary>The namespace names in <c>ip netns list</c> output ("name (id: 3)" or "name").</summary>
    internal static IEnumerable<string> ParseNamespaceNames(string output) =>
        output.Split('\n', StringSplitOptions.RemoveEmptyEntries)
            .Select(line => line.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(fields => fields.Length > 0)
            .Select(fields => fields[0]);

    private static async Task KillProcessesInNamespaceAsync(string name, List<string> errors)
    {
        var pids = await CommandRunner.TryRunAsync("ip", ["netns", "pids", name], CancellationToken.None).ConfigureAwait(false);
        if (!pids.Succeeded)
        {
            return; // The namespace was never mounted (a half-made create): no process can be in it.
        }

        foreach (var field in pids.StandardOutput.Split((char[])['\n', ' '], StringSplitOptions.RemoveEmptyEntries))
        {
            if (!int.TryParse(field, NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
            {
                continue;
            }

            try
            {
                using var process = Process.GetProcessById(pid);
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(10)).Token).ConfigureAwait(false);
            }
            catch (ArgumentException)
            {
                // It exited between the listing and the kill.
            }
            catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception or OperationCanceledException)
            {
                errors.Add($"process {pid} in namespace {name} could not be killed: {e.Message}");
            }
        }
    }

    private static async Task DeleteLinkAsync(string name, List<string> errors)
    {
        var result = await CommandRunner.TryRunAsync("ip", ["link", "del", name], CancellationToken.None).ConfigureAwait(false);
        if (!result.Succeeded && !result.StandardError.Contains("Cannot find device", StringComparison.Ordinal))
        {
            errors.Add(result.ToException().Message);
        }
    }

    private static async Task DeleteNamespaceAsync(string name, List<string> errors)
    {
        var result = await CommandRunner.TryRunAsync("ip", ["netns", "del", name], CancellationToken.None).ConfigureAwait(false);
        if (!result.Succeeded && !result.StandardError.Contains("No such file", StringComparison.Ordinal))
        {
            errors.Add(result.ToException().Message);
        }
    }

    /// <summary>Null when supported, else the reason: runs the real steps once with a name of its own, then removes them.</summary>
    private static string? ProbeSupport()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "network namespaces need Linux";
        }

        if (!Environment.IsPrivilegedProcess)
        {
            return "network namespaces and tc need root (the tests and the machines run as root; this process does not)";
        }

        foreach (var tool in (string[])["ip", "tc"])
        {
            if (CommandRunner.FindTool(tool) is null)
            {
                return $"`{tool}` is not installed: apt-get install --no-install-recommends iproute2 (or bash scripts/setup.sh)";
            }
        }

        // A prefix of the probe's own (the process id keeps concurrent probes apart); the highest free index, so no live link's addresses are doubled.
        var prefix = "fcq" + (Environment.ProcessId % 1_000_000).ToString(CultureInfo.InvariantCulture);
        try
        {
            var probe = Task.Run(async () =>
            {
                await CleanupAsync(prefix).ConfigureAwait(false);
                var names = await FreeProbeNamesAsync(prefix).ConfigureAwait(false);
                var created = new NetworkNamespace(names);
                try
                {
                    await created.BuildAsync(new ShapedLinkOptions { RateBytesPerSecond = 90_000_000 }, CancellationToken.None)
                        .ConfigureAwait(false);
                }
                finally
                {
                    await created.DisposeAsync().ConfigureAwait(false);
                }
            });
            return probe.Wait(TimeSpan.FromSeconds(30)) ? null : "probing network namespace support took more than 30 s";
        }
        catch (AggregateException e)
        {
            return $"a probe namespace with a shaped veth link could not be made: {e.InnerException?.Message ?? e.Message}";
        }
    }

    /// <summary>The probe's names at the highest index whose /30 no interface has (the probe must not double a live link's address).</summary>
    private static async Task<NetworkNames> FreeProbeNamesAsync(string prefix)
    {
        for (var index = NetworkNames.MaxIndex; index >= 0; index--)
        {
            var names = NetworkNames.Create(prefix, index);
            try
            {
                await ThrowIfAddressesTakenAsync(names, CancellationToken.None).ConfigureAwait(false);
                return names;
            }
            catch (NetworkEmulationException) when (index > 0)
            {
                // Taken: try the next one down.
            }
        }

        throw new NetworkEmulationException("every index of 10.250.0.0/16 is taken");
    }

    /// <summary>Null when netem can be added (tried on an ifb device of the probe's own), else the reason.</summary>
    private static string? ProbeNetem()
    {
        if (!IsSupported(out var why))
        {
            return why;
        }

        var device = "fcq" + (Environment.ProcessId % 1_000_000).ToString(CultureInfo.InvariantCulture) + "n";
        var probe = Task.Run(async () =>
        {
            var errors = new List<string>();
            await DeleteLinkAsync(device, errors).ConfigureAwait(false);
            await CommandRunner.RunAsync("ip", ["link", "add", device, "type", "ifb"], CancellationToken.None).ConfigureAwait(false);
            try
            {
                var netem = await CommandRunner.TryRunAsync("tc", ["qdisc", "add", "dev", device, "root", "netem", "delay", "1ms"], CancellationToken.None)
                    .ConfigureAwait(false);
                return netem.Succeeded
                    ? null
                    : $"tc's netem qdisc is not available ({netem.ToException().Message}): this kernel ({Environment.OSVersion.Version}) was built without CONFIG_NET_SCH_NETEM, so links can be rate-limited (tbf) but not delayed or lossy";
            }
            finally
            {
                await DeleteLinkAsync(device, errors).ConfigureAwait(false);
            }
        });
        try
        {
            return probe.Wait(TimeSpan.FromSeconds(30)) ? probe.Result : "probing for netem took more than 30 s";
        }
        catch (AggregateException e)
        {
            return $"probing for netem failed: {e.InnerException?.Message ?? e.Message}";
        }
    }
}
