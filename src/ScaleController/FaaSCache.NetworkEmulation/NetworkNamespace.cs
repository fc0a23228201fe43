using FaaSCache.Options;

namespace FaaSCache.NetworkEmulation;

/// <summary>
/// One instance's own network: a namespace joined to the root namespace by a veth pair whose root end is shaped in both
/// directions (egress by a qdisc on the veth, ingress by redirecting it through an ifb device with the same qdisc), so
/// each instance reaches storage in the root namespace over its own link, as §6 of the paper assumes (~90 MB/s).
/// Instance-to-instance traffic is routed through the root namespace and so crosses both instances' links: what the
/// planner calls BW_Inst is bounded by the same shaping, unless <see cref="ShapedLinkOptions.InstanceRateBytesPerSecond"/>
/// gives it a bucket of its own (in the paper's VMs it was higher, 750 MB/s, against 90 MB/s to storage).
/// Needs root and iproute2 (<see cref="IsSupported"/>); <see cref="DisposeAsync"/> removes everything it made.
/// </summary>
public sealed partial class NetworkNamespace : IAsyncDisposable
{
    private static readonly TimeSpan CarrierTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan CarrierPollInterval = TimeSpan.FromMilliseconds(20);
    private readonly NetworkNames _names;
    private readonly SemaphoreSlim _gate = new(1, 1);
    private ShapedLinkOptions _link = ShapedLinkOptions.Unshaped;
    private bool _namespaceCreated;
    private bool _vethCreated;
    private bool _ingressCreated;
    private bool _linkDown;
    private bool _disposed;

    private NetworkNamespace(NetworkNames names) => _names = names;

    /// <summary>The prefix the names were made with (what <see cref="CleanupAsync"/> takes).</summary>
    public string Prefix => _names.Prefix;

    /// <summary>The index: the third octet of the link's addresses and the number in its names.</summary>
    public int Index => _names.Index;

    /// <summary>The namespace's name, <c>&lt;prefix&gt;-&lt;index&gt;</c> (for <c>ip netns exec</c>).</summary>
    public string Name => _names.Namespace;

    /// <summary>The root namespace's end of the link, 10.250.&lt;index&gt;.1: where a server in the root namespace (storage) is reached.</summary>
    public IPAddress HostAddress => _names.HostAddress;

    /// <summary>The namespace's own address, 10.250.&lt;index&gt;.2: what processes inside see and where they can listen.</summary>
    public IPAddress InstanceAddress => _names.InstanceAddress;

    /// <summary>The root-side veth end, <c>&lt;prefix&gt;v&lt;index&gt;a</c>, whose egress (towards the namespace) is shaped.</summary>
    public string RootInterface => _names.RootInterface;

    /// <summary>The namespace-side veth end, <c>&lt;prefix&gt;v&lt;index&gt;b</c>.</summary>
    public string InstanceInterface => _names.InstanceInterface;

    /// <summary>The ifb device <c>&lt;prefix&gt;v&lt;index&gt;i</c> that shapes the root end's ingress (traffic from the namespace).</summary>
    public string IngressInterface => _names.IngressInterface;

    /// <summary>A copy of the shape currently applied.</summary>
    public ShapedLinkOptions Link => _link.Clone();

    /// <summary>
    /// Makes namespace <c>&lt;prefix&gt;-&lt;index&gt;</c> with the link 10.250.&lt;index&gt;.1 (root) — .2 (namespace)
    /// shaped as <paramref name="link"/>, a route to every other link's /30 through the root namespace, and loopback up.
    /// On failure (or cancellation) whatever was made is removed before the exception propagates.
    /// </summary>
    /// <exception cref="ArgumentException">The prefix or index is not allowed (the message says why).</exception>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="link"/> is invalid.</exception>
    /// <exception cref="NotSupportedException"><paramref name="link"/> asks for delay or loss and the kernel has no netem (<see cref="IsDelayAndLossSupported"/>).</exception>
    /// <exception cref="NetworkEmulationException">A command failed (named in the message), e.g. the index's addresses are taken.</exception>
    public static async Task<NetworkNamespace> CreateAsync(string prefix, int index, ShapedLinkOptions link, CancellationToken ct)
    {
        var names = NetworkNames.Create(prefix, index);
        ArgumentNullException.ThrowIfNull(link);
        _ = new ShapedLinkOptionsValidator().ThrowIfInvalid(link);
        ThrowIfDelayOrLossUnsupported(link);
        await ThrowIfAddressesTakenAsync(names, ct).ConfigureAwait(false);

        var created = new NetworkNamespace(names);
        try
        {
            await created.BuildAsync(link.Clone(), ct).ConfigureAwait(false);
            return created;
        }
        catch (Exception e)
        {
            try
            {
                await created.DisposeAsync().ConfigureAwait(false);
            }
            catch (NetworkEmulationException cleanup)
            {
                throw new NetworkEmulationException($"{e.Message} (and removing what was made failed: {cleanup.Message})", e);
            }

            throw;
        }
    }

    /// <summary>
    /// Returns a copy of <paramref name="startInfo"/> that runs the same program inside this namespace through
    /// <c>ip netns exec</c> (which execs it, so the process id is the program's), keeping its arguments, environment,
    /// working directory, redirections and encodings.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="startInfo"/> uses the shell (there is no shell execute on Linux).</exception>
    public ProcessStartInfo Wrap(ProcessStartInfo startInfo)
    {
        ArgumentNullException.ThrowIfNull(startInfo);
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (startInfo.UseShellExecute)
        {
            throw new ArgumentException("ProcessStartInfo.UseShellExecute is true: only a program started directly can be wrapped (set it to false).", nameof(startInfo));
        }

        if (string.IsNullOrEmpty(startInfo.FileName))
        {
            throw new ArgumentException("ProcessStartInfo.FileName is empty: there is no program to run in the namespace.", nameof(startInfo));
        }

        var ip = CommandRunner.FindTool("ip") ?? throw new NetworkEmulationException("`ip` was not found: install iproute2 (bash scripts/setup.sh).");
        var wrapped = new ProcessStartInfo(ip)
        {
            UseShellExecute = false,
            WorkingDirectory = startInfo.WorkingDirectory,
            RedirectStandardInput = startInfo.RedirectStandardInput,
            RedirectStandardOutput = startInfo.RedirectStandardOutput,
            RedirectStandardError = startInfo.RedirectStandardError,
            StandardInputEncoding = startInfo.StandardInputEncoding,
            StandardOutputEncoding = startInfo.StandardOutputEncoding,
            StandardErrorEncoding = startInfo.StandardErrorEncoding,
            CreateNoWindow = startInfo.CreateNoWindow,
        };
        wrapped.Environment.Clear();
        foreach (var (key, value) in startInfo.Environment)
        {
            wrapped.Environment[key] = value;
        }

        if (!string.IsNullOrEmpty(startInfo.Arguments))
        {
            // One command line: .NET splits it with the same rules whatever comes first, so prefix it textually.
            wrapped.Arguments = $"netns exec {Name} {QuoteArgument(startInfo.FileName)} {startInfo.Arguments}";
        }
        else
        {
            foreach (var argument in (string[])["netns", "exec", Name, startInfo.FileName, .. startInfo.ArgumentList])
            {
                wrapped.ArgumentList.Add(argument);
            }
        }

        return wrapped;
    }

    /// <summary>Replaces the link's shape in both directions (briefly unshaped while the qdiscs are swapped).</summary>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="link"/> is invalid.</exception>
    /// <exception cref="NotSupportedException"><paramref name="link"/> asks for delay or loss and the kernel has no netem.</exception>
    public async Task ReshapeAsync(ShapedLinkOptions link)
    {
        ArgumentNullException.ThrowIfNull(link);
        _ = new ShapedLinkOptionsValidator().ThrowIfInvalid(link);
        ThrowIfDelayOrLossUnsupported(link);
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            await LinkShaper.RemoveAsync(RootInterface, CancellationToken.None).ConfigureAwait(false);
            await LinkShaper.RemoveAsync(IngressInterface, CancellationToken.None).ConfigureAwait(false);
            _link = ShapedLinkOptions.Unshaped;

            var copy = link.Clone();
            await LinkShaper.ApplyAsync(RootInterface, copy, LinkShaper.Direction.TowardsInstance, CancellationToken.None).ConfigureAwait(false);
            _link = copy;
            await LinkShaper.ApplyAsync(IngressInterface, copy, LinkShaper.Direction.FromInstance, CancellationToken.None).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>
    /// Takes the link down (<paramref name="down"/> true: the namespace is cut off from the root namespace and every other
    /// instance, a partition) or brings it back up with its shape and routes.
    /// </summary>
    public async Task SetLinkDownAsync(bool down)
    {
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            await CommandRunner.RunAsync("ip", ["link", "set", RootInterface, down ? "down" : "up"], CancellationToken.None).ConfigureAwait(false);
            _linkDown = down;
            if (!down)
            {
                // Neighbours that failed while the link was down would answer "no route to host" until they expire.
                await CommandRunner.RunAsync("ip", ["neigh", "flush", "dev", RootInterface], CancellationToken.None).ConfigureAwait(false);
                await CommandRunner.RunAsync("ip", ["-n", Name, "neigh", "flush", "dev", InstanceInterface], CancellationToken.None).ConfigureAwait(false);
                await WaitForCarrierAsync().ConfigureAwait(false);
            }
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>True while <see cref="SetLinkDownAsync"/> holds the link down.</summary>
    public bool IsLinkDown => _linkDown;

    /// <summary>
    /// Removes what this instance made, even when <see cref="CreateAsync"/> stopped half way: processes left in the
    /// namespace are killed (a process would keep an unnamed namespace alive), then the veth pair, the ifb device and the
    /// namespace are deleted. Throws <see cref="NetworkEmulationException"/> after trying every step if any failed.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            var errors = new List<string>();
            if (_namespaceCreated)
            {
                await KillProcessesInNamespaceAsync(Name, errors).ConfigureAwait(false);
            }

            if (_vethCreated)
            {
                await DeleteLinkAsync(RootInterface, errors).ConfigureAwait(false);
            }

            if (_ingressCreated)
            {
                await DeleteLinkAsync(IngressInterface, errors).ConfigureAwait(false);
            }

            if (_namespaceCreated)
            {
                await DeleteNamespaceAsync(Name, errors).ConfigureAwait(false);
            }

            if (errors.Count > 0)
            {
                throw new NetworkEmulationException($"removing network namespace {Name} left something behind: {string.Join("; ", errors)}");
            }
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"{Name} ({HostAddress} <-> {InstanceAddress}, {_link})";

    private async Task BuildAsync(ShapedLinkOptions link, CancellationToken ct)
    {
        await CommandRunner.RunAsync("ip", ["netns", "add", Name], ct).ConfigureAwait(false);
        _namespaceCreated = true;
        await CommandRunner.RunAsync("ip", ["link", "add", RootInterface, "type", "veth", "peer", "name", InstanceInterface], ct).ConfigureAwait(false);
        _vethCreated = true;
        await CommandRunner.RunAsync("ip", ["link", "set", InstanceInterface, "netns", Name], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("ip", ["addr", "add", $"{HostAddress}/30", "dev", RootInterface], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("ip", ["link", "set", RootInterface, "up"], ct).ConfigureAwait(false);

        // Instances reach each other through the root namespace; forwarding is enabled on this link only, not machine-wide.
        await File.WriteAllTextAsync($"/proc/sys/net/ipv4/conf/{RootInterface}/forwarding", "1", ct).ConfigureAwait(false);

        string[] inside = ["netns", "exec", Name, "ip"];
        await CommandRunner.RunAsync("ip", [.. inside, "addr", "add", $"{InstanceAddress}/30", "dev", InstanceInterface], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("ip", [.. inside, "link", "set", InstanceInterface, "up"], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("ip", [.. inside, "link", "set", "lo", "up"], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("ip", [.. inside, "route", "add", NetworkNames.AllLinksPrefix, "via", HostAddress.ToString()], ct).ConfigureAwait(false);

        // The root end's ingress goes through an ifb device so that the same qdiscs shape the namespace's uploads.
        await CommandRunner.RunAsync("ip", ["link", "add", IngressInterface, "type", "ifb"], ct).ConfigureAwait(false);
        _ingressCreated = true;
        await CommandRunner.RunAsync("ip", ["link", "set", IngressInterface, "up"], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("tc", ["qdisc", "add", "dev", RootInterface, "handle", "ffff:", "ingress"], ct).ConfigureAwait(false);
        await CommandRunner.RunAsync("tc",
            ["filter", "add", "dev", RootInterface, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0", "0",
             "action", "mirred", "egress", "redirect", "dev", IngressInterface], ct).ConfigureAwait(false);

        await LinkShaper.ApplyAsync(RootInterface, link, LinkShaper.Direction.TowardsInstance, ct).ConfigureAwait(false);
        _link = link;
        await LinkShaper.ApplyAsync(IngressInterface, link, LinkShaper.Direction.FromInstance, ct).ConfigureAwait(false);
    }

    /// <summary>Returns once both veth ends report carrier ("ip link set up" returns before the kernel's link watch has run).</summary>
    private async Task WaitForCarrierAsync()
    {
        var deadline = TimeProvider.System.GetTimestamp() + (long)(CarrierTimeout.TotalSeconds * TimeProvider.System.TimestampFrequency);
        while (true)
        {
            var root = await CommandRunner.RunAsync("ip", ["-o", "link", "show", "dev", RootInterface], CancellationToken.None).ConfigureAwait(false);
            var inside = await CommandRunner.RunAsync("ip", ["-n", Name, "-o", "link", "show", "dev", InstanceInterface], CancellationToken.None).ConfigureAwait(false);
            if (root.Contains("LOWER_UP", StringComparison.Ordinal) && inside.Contains("LOWER_UP", StringComparison.Ordinal))
            {
                return;
            }

            if (TimeProvider.System.GetTimestamp() > deadline)
            {
                throw new NetworkEmulationException($"the link of {Name} did not come back up within {CarrierTimeout.TotalSeconds} s: {root.Trim()} / {inside.Trim()}");
            }

            await Task.Delay(CarrierPollInterval).ConfigureAwait(false);
        }
    }

    private static void ThrowIfDelayOrLossUnsupported(ShapedLinkOptions link)
    {
        if ((link.Delay is not null || link.LossPercent is not null) && !IsDelayAndLossSupported(out var why))
        {
            throw new NotSupportedException($"ShapedLinkOptions.Delay and LossPercent cannot be applied here: {why}.");
        }
    }

    private static async Task ThrowIfAddressesTakenAsync(NetworkNames names, CancellationToken ct)
    {
        var addresses = await CommandRunner.RunAsync("ip", ["-o", "-4", "addr", "show"], ct).ConfigureAwait(false);
        var subnet = $" inet 10.250.{names.Index}.";
        foreach (var line in addresses.Split('\n'))
        {
            if (line.Contains(subnet, StringComparison.Ordinal))
            {
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                throw new NetworkEmulationException(
                    $"index {names.Index} is taken: 10.250.{names.Index}.0/30 is already on interface {(fields.Length > 1 ? fields[1] : "?")} (another namespace with this index, perhaps of another prefix): use another index or remove it (NetworkNamespace.CleanupAsync).");
            }
        }
    }

    /// <summary>Quotes one argument for <see cref="ProcessStartInfo.Arguments"/> (backslashes count only before a quote).</summary>
    private static string QuoteArgument(string argument)
    {
        if (argument.Length > 0 && !argument.Any(c => char.IsWhiteSpace(c) || c is '"' or '\\' or '\''))
        {
            return argument;
        }

        var quoted = new System.Text.StringBuilder("\"");
        var backslashes = 0;
        foreach (var c in argument)
        {
            if (c == '\\')
            {
                backslashes++;
                continue;
            }

            quoted.Append('\\', c == '"' ? (backslashes * 2) + 1 : backslashes).Append(c);
            backslashes = 0;
        }

        return quoted.Append('\\', backslashes * 2).Append('"').ToString();
    }
}
