using System.CommandLine;
using System.CommandLine.Parsing;
using System.Net.NetworkInformation;
using FaaSCache.Hosting;

namespace FaaSCache.Host.Start;

/// <summary>
/// The <c>start</c> command's options (System.CommandLine): <c>--help</c> lists every one of them, an unknown
/// option is named with the closest valid one, and a bad value names the option, the value and what is allowed.
/// </summary>
public static class StartCommandLine
{
    private static readonly Option<string> ScriptRoot = new("--script-root")
    {
        Description = "The function app folder (host.json, local.settings.json, one folder per function). Default: the current folder.",
    };

    private static readonly Option<int> Port = new("--port")
    {
        Description = "The HTTP port: triggers on http://<listen-address>:<port>/api/<route>, admin on /admin/... (1..65535).",
        DefaultValueFactory = _ => 7071,
        CustomParser = r => ParsePort(r, "--port"),
    };

    private static readonly Option<string> Cache = OnOff("--cache", "on: blob bindings go through the cache; off: the stock host's behaviour (blob bytes inside the gRPC messages).");

    private static readonly Option<string> InstanceId = new("--instance-id")
    {
        Description = "This instance's id: names its shared-memory journal and its membership entry (auto: this machine's host name, a pod's name). Default: host-<port>.",
    };

    private static readonly Option<string> WorkersDir = new("--workers-dir")
    {
        Description = "The folder holding <language>/worker.config.json. Default: $FAASCACHE_WORKERS_DIR, else workers/ beside the host's executable.",
    };

    private static readonly Option<string> AccessLog = new("--access-log")
    {
        Description = "Append every blob input and output of every invocation to this file, one row each in the Azure blob trace's CSV columns (with --cache on or off): the log `faascache what-if --log` replays.",
        HelpName = "file",
    };

    private static readonly Option<TimeSpan> BlobPollInterval = new("--blob-poll-interval")
    {
        Description = "Seconds between polls of blob-trigger containers for writes made by others (> 0; default 2).",
        HelpName = "seconds",
        DefaultValueFactory = _ => TimeSpan.FromSeconds(2),
        CustomParser = r =>
        {
            if (r.Tokens.Count == 0)
            {
                return TimeSpan.FromSeconds(2);
            }

            string text = r.Tokens[0].Value;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds) && seconds > 0 && seconds < TimeSpan.MaxValue.TotalSeconds)
            {
                return TimeSpan.FromSeconds(seconds);
            }

            // The help prints the default as hh:mm:ss: that form is taken too.
            if (text.Contains(':', StringComparison.Ordinal) && TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out TimeSpan span) && span > TimeSpan.Zero)
            {
                return span;
            }

            r.AddError($"--blob-poll-interval '{text}' must be a positive number of seconds (e.g. 0.5), or hh:mm:ss");
            return default;
        },
    };

    private static readonly Option<string> AppName = new("--app-name")
    {
        Description = "The app name: names the membership blob and derives the peers' key. Default: the app folder's name.",
    };

    private static readonly Option<string> Membership = OnOff("--membership", "on: join the app's other instances as one cache (needs --cache on); off: own every key alone.");

    private static readonly Option<int?> PeerPort = new("--peer-port")
    {
        Description = "The port of the peer (cachelet-to-cachelet) gRPC service. Default: a free port.",
        CustomParser = r => r.Tokens.Count == 0 ? null : ParsePort(r, "--peer-port"),
    };

    private static readonly Option<IPAddress> PeerAddress = new("--peer-address")
    {
        Description = "The address the peer service binds to and advertises to the other instances (auto: this machine's own address, the first interface up that is not loopback).",
        DefaultValueFactory = _ => IPAddress.Loopback,
        CustomParser = r => ParseAddress(r, "--peer-address"),
    };

    private static readonly Option<IPAddress> ListenAddress = new("--listen-address")
    {
        Description = "The address the HTTP port (triggers, admin, /metrics) binds to. Default 127.0.0.1; a scale controller that runs instances in network namespaces passes the namespace's address.",
        DefaultValueFactory = _ => IPAddress.Loopback,
        CustomParser = r => ParseAddress(r, "--listen-address"),
    };

    private static readonly Option<Uri?> ScaleController = new("--scale-controller")
    {
        Description = "The scale controller's gRPC address (http://host:port/): urgent votes (a large miss that wants more instances now) go there. Default: none (votes are only answered when asked).",
        HelpName = "url",
        CustomParser = r =>
        {
            if (r.Tokens.Count == 0)
            {
                return null;
            }

            string text = r.Tokens[0].Value;
            if (Uri.TryCreate(text, UriKind.Absolute, out Uri? uri) && uri.Scheme is "http" or "https")
            {
                return uri;
            }

            r.AddError($"--scale-controller '{text}' is not an http:// or https:// address");
            return null;
        },
    };

    /// <summary>The option that turns key checks off for local development (<c>faascache start</c> passes <c>--auth off</c>).</summary>
    public static readonly Option<string> Auth = OnOff(
        "--auth",
        "on: HTTP triggers need the key their authLevel asks for and /admin the master key, from the app's key store (AzureWebJobsSecretStorageType: files in FUNCTIONS_SECRETS_PATH or <app>/.faascache/secrets, or kubernetes); off: no key is checked (local development). The host's default is on; `faascache start` runs with off unless given --enable-auth or --auth on, as func start does.");

    private static readonly Option<TimeSpan> ReadyTimeout = new("--ready-timeout")
    {
        Description = "Seconds an HTTP request that arrives while the host is initializing (its workers still indexing and loading) waits before it gets 503 \"Function host is not running.\", as the Functions host's 30.",
        HelpName = "seconds",
        DefaultValueFactory = _ => HostLifecycle.DefaultReadyTimeout,
        CustomParser = r =>
        {
            string text = r.Tokens.Count == 0 ? "30" : r.Tokens[0].Value;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds) && seconds is > 0 and <= 3600)
            {
                return TimeSpan.FromSeconds(seconds);
            }

            r.AddError($"--ready-timeout '{text}' must be a number of seconds from 0 to 3600 (not 0)");
            return HostLifecycle.DefaultReadyTimeout;
        },
    };

    /// <summary>Creates the <c>start</c> command; its action runs the host with the parsed <see cref="HostSettings"/>.</summary>
    public static Command Create(Func<HostSettings, CancellationToken, Task<int>> run)
    {
        var command = new Command("start", "Runs a function app as Core Tools' `func start` does, with blob bindings served through the cache.")
        {
            ScriptRoot, Port, Cache, InstanceId, WorkersDir, BlobPollInterval, AppName, Membership, PeerPort, PeerAddress, ListenAddress, ScaleController, Auth, ReadyTimeout, AccessLog,
        };
        command.SetAction((result, cancellationToken) => run(ToSettings(result), cancellationToken));
        return command;
    }

    /// <summary>Parses <c>start</c>'s arguments (without the word start); throws <see cref="CommandLineException"/> naming every error.</summary>
    public static HostSettings Parse(string[] args)
    {
        var root = new RootCommand { Create((_, _) => Task.FromResult(0)) };
        ParseResult result = root.Parse(["start", .. args]);
        if (result.Errors.Count > 0)
        {
            throw new CommandLineException(string.Join(Environment.NewLine, result.Errors.Select(e => e.Message)));
        }

        return ToSettings(result);
    }

    private static HostSettings ToSettings(ParseResult result)
    {
        string root = Path.GetFullPath(result.GetValue(ScriptRoot) ?? Directory.GetCurrentDirectory());
        int port = result.GetValue(Port);
        bool cache = result.GetValue(Cache) == "on";
        IPAddress peerAddress = result.GetValue(PeerAddress) ?? IPAddress.Loopback;
        int peerPort = result.GetValue(PeerPort) ?? FreePorts.GetOtherThan(peerAddress, port);
        return new HostSettings
        {
            AppName = result.GetValue(AppName) ?? FunctionAppLoader.AppNameOf(root),
            Membership = result.GetValue(Membership) == "on" && cache,
            PeerAddress = peerAddress,
            PeerPort = peerPort,
            ScriptRoot = root,
            Port = port,
            CacheEnabled = cache,
            InstanceId = result.GetValue(InstanceId) is "auto" ? Dns.GetHostName() : result.GetValue(InstanceId) ?? $"host-{port}",
            WorkersDirectory = result.GetValue(WorkersDir) ?? FindWorkersDirectory(),
            BlobPollInterval = result.GetValue(BlobPollInterval),
            AccessLogPath = result.GetValue(AccessLog),
            ListenAddress = result.GetValue(ListenAddress) ?? IPAddress.Loopback,
            ScaleController = result.GetValue(ScaleController),
            EnforceKeys = result.GetValue(Auth) != "off",
            ReadyTimeout = result.GetValue(ReadyTimeout),
            WorkerPort = FreePorts.GetOtherThan(IPAddress.Loopback, port, peerPort),
        };
    }

    // Port 0 is refused: the FunctionRpc listener also takes an ephemeral port, and with both ephemeral the
    // host cannot tell them apart (it handed workers the HTTP/1 address, so they never connected).
    private static int ParsePort(ArgumentResult r, string name)
    {
        if (r.Tokens.Count == 0)
        {
            return 7071;
        }

        string text = r.Tokens[0].Value;
        if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port is >= 1 and <= 65535)
        {
            return port;
        }

        r.AddError($"{name} '{text}' is not a port number (1..65535)");
        return 0;
    }

    private static IPAddress ParseAddress(ArgumentResult r, string name)
    {
        if (r.Tokens.Count == 0)
        {
            return IPAddress.Loopback;
        }

        string text = r.Tokens[0].Value;
        if (IPAddress.TryParse(text, out IPAddress? address))
        {
            return address;
        }

        if (text == "auto")
        {
            if (OwnAddress() is { } own)
            {
                return own;
            }

            r.AddError($"{name} auto: this machine has no network interface that is up with an IPv4 address other than loopback");
            return IPAddress.Loopback;
        }

        r.AddError($"{name} '{text}' is not an IP address (or auto: this machine's own address)");
        return IPAddress.Loopback;
    }

    /// <summary>
    /// <c>auto</c>: the IPv4 address of the first interface that is up and not loopback (a container's or pod's own
    /// address where the engine has no downward API for it, e.g. podman's kube play, which has no status.podIP).
    /// </summary>
    internal static IPAddress? OwnAddress() =>
        NetworkInterface.GetAllNetworkInterfaces()
            .Where(n => n.OperationalStatus is OperationalStatus.Up or OperationalStatus.Unknown && n.NetworkInterfaceType != NetworkInterfaceType.Loopback)
            .OrderBy(n => n.Name, StringComparer.Ordinal)
            .SelectMany(n => n.GetIPProperties().UnicastAddresses)
            .Select(a => a.Address)
            .FirstOrDefault(a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork && !IPAddress.IsLoopback(a));

    // A string option, not Option<bool>: System.CommandLine takes only true/false as a bool's value.
    private static Option<string> OnOff(string name, string description)
    {
        var option = new Option<string>(name)
        {
            Description = description,
            HelpName = "on|off",
            DefaultValueFactory = _ => "on",
        };
        option.Validators.Add(r =>
        {
            string? text = r.GetValueOrDefault<string>();
            if (text is not ("on" or "off"))
            {
                r.AddError($"{name} '{text}' must be on or off");
            }
        });
        return option;
    }

    /// <summary>The installed layout: <c>$FAASCACHE_WORKERS_DIR</c>, else <c>workers/</c> beside the executable.</summary>
    private static string FindWorkersDirectory()
        => Environment.GetEnvironmentVariable("FAASCACHE_WORKERS_DIR") is { Length: > 0 } fromEnvironment
            ? fromEnvironment
            : Path.Combine(AppContext.BaseDirectory, "workers");
}
