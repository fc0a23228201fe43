using System.CommandLine;
using System.CommandLine.Parsing;

namespace FaaSCache.ScaleController.Options;

/// <summary>
/// The controller's command line (System.CommandLine): each option sets one <see cref="ScaleControllerOptions"/> key;
/// values that do not parse are named with the option; ranges are checked by <see cref="ScaleControllerOptionsValidator"/>.
/// </summary>
public static class ScaleControllerCommandLine
{
    /// <summary>The environment variable that names the host DLL when <c>--host-dll</c> is not given.</summary>
    public const string HostDllVariable = "FAASCACHE_HOST_DLL";

    private static readonly Option<InstanceSourceMode> Instances = Choice(
        "--instances",
        "launch: run the host processes here behind the front door; membership: only decide, for the instances listed in the app's membership blob (KEDA runs them).",
        InstanceSourceMode.Launch);

    private static readonly Option<string> ScriptRoot = new("--script-root") { Description = "The function app folder every instance runs (holds host.json). Required with --instances launch." };
    private static readonly Option<string> AppName = new("--app-name") { Description = "The app name (instance ids <app>-N; the membership blob <app>.json). Default: the app folder's name." };
    private static readonly Option<string> Storage = new("--storage") { Description = "The app's storage connection string. Default: $AzureWebJobsStorage." };
    private static readonly Option<int> MinInstances = new("--min-instances") { Description = "Fewest instances (0 lets an idle app scale to zero).", DefaultValueFactory = _ => 0 };
    private static readonly Option<int> MaxInstances = new("--max-instances") { Description = "Most instances (1..64).", DefaultValueFactory = _ => 6 };
    private static readonly Option<TimeSpan> PollInterval = Seconds("--poll-interval", "Seconds between polls of the instances' votes.", 2);
    private static readonly Option<TimeSpan> ScaleOutCooldown = Seconds("--scale-out-cooldown", "Least seconds between two scale-outs.", 1);
    private static readonly Option<TimeSpan> ScaleInCooldown = Seconds("--scale-in-cooldown", "Least seconds after any change before a scale-in.", 30);
    private static readonly Option<TimeSpan> IdleToZero = Seconds("--idle-to-zero", "Seconds without requests (every vote in) before the app scales to its minimum.", 60);
    private static readonly Option<KeepAliveMode> KeepAlive = Choice(
        "--keep-alive",
        "fixed: unload after --idle-to-zero; histogram: the hybrid histogram (§3.3) unloads after its keep-alive window and reloads at its pre-warm time (state in the blob faascache-meta/<app>/histogram.json).",
        KeepAliveMode.Fixed);

    private static readonly Option<TimeSpan> HistogramBin = Seconds("--histogram-bin", "With --keep-alive histogram: the width of one of its 240 bins (the paper: 60, a 4-hour range).", 60);
    private static readonly Option<int> HistogramMinSamples = new("--histogram-min-samples") { Description = "With --keep-alive histogram: the fewest idle times before the histogram is trusted.", DefaultValueFactory = _ => 10 };
    private static readonly Option<TimeSpan> HoldTimeout = Seconds("--hold-timeout", "Seconds a request is held for a cold start before 503.", 60);
    private static readonly Option<TimeSpan> DrainTimeout = Seconds("--drain-timeout", "Seconds a draining instance has to finish its requests.", 30);
    private static readonly Option<TimeSpan> StartTimeout = Seconds("--start-timeout", "Seconds an instance may take to become ready.", 90);
    private static readonly Option<TimeSpan> StopTimeout = Seconds("--stop-timeout", "Seconds after SIGTERM before an instance is killed.", 30);
    private static readonly Option<string> HostDll = new("--host-dll") { Description = $"The FaaSCache.Host.dll to run. Default: ${HostDllVariable}." };
    private static readonly Option<IPAddress> ListenAddress = new("--listen-address")
    {
        Description = "The address the controller listens on and instances bind to.",
        DefaultValueFactory = _ => IPAddress.Loopback,
        CustomParser = r =>
        {
            string text = r.Tokens.Count > 0 ? r.Tokens[0].Value : "127.0.0.1";
            if (IPAddress.TryParse(text, out IPAddress? address))
            {
                return address;
            }

            r.AddError($"--listen-address '{text}' is not an IP address");
            return IPAddress.Loopback;
        },
    };

    private static readonly Option<int> Port = new("--port") { Description = "The front door's HTTP port (/api/*, /scale/status); 0: a free one.", DefaultValueFactory = _ => 8080 };
    private static readonly Option<int> GrpcPort = new("--grpc-port") { Description = "The gRPC port (urgent votes); 0: a free one.", DefaultValueFactory = _ => 8081 };
    private static readonly Option<int?> MemberHttpPort = new("--member-http-port")
    {
        Description = "With --instances membership: route /api/* to the members' HTTP port at their advertised address (the app's way in where no Service spreads requests). Default: no front door (/api/* answers 501).",
    };

    private static readonly Option<string> ShmRoot = new("--shm-root") { Description = "Where each instance gets its shared-memory folder.", DefaultValueFactory = _ => "/dev/shm" };
    private static readonly Option<bool> Netns = new("--netns") { Description = "Run each instance in its own network namespace behind a shaped link (needs root, --listen-address 0.0.0.0, storage on 0.0.0.0)." };
    private static readonly Option<long?> LinkRate = new("--link-rate") { Description = "With --netns: each link's rate in bytes/s, both ways (e.g. 90000000 for the paper's 90 MB/s). Default: unshaped." };
    private static readonly Option<string> NetnsPrefix = new("--netns-prefix") { Description = "With --netns: the namespaces' name prefix.", DefaultValueFactory = _ => "fcscale" };
    private static readonly Option<string> Auth = new("--auth")
    {
        Description = "on (the default): /scale/status needs the app's master key and launched instances enforce their keys (AzureWebJobsSecretStorageType: files in FUNCTIONS_SECRETS_PATH or <app>/.faascache/secrets, or kubernetes); off: no key is checked (local development).",
        HelpName = "on|off",
        DefaultValueFactory = _ => "on",
        Validators =
        {
            r =>
            {
                if (r.GetValueOrDefault<string>() is not ("on" or "off") and var text)
                {
                    r.AddError($"--auth '{text}' must be on or off");
                }
            },
        },
    };

    private static readonly Option<bool> StatusView = new("--status-view") { Description = "Show a live status table (refreshed every second) instead of log lines." };

    /// <summary>Creates the root command; its action runs the controller with the parsed options.</summary>
    public static RootCommand Create(Func<ScaleControllerOptions, bool, CancellationToken, Task<int>> run)
    {
        ArgumentNullException.ThrowIfNull(run);
        var root = new RootCommand("FaaSCache scale controller: runs a function app's FaaSCache host instances behind a front door and scales them by their votes (Faa$T §4); with --instances membership it only decides, for KEDA.")
        {
            Instances, ScriptRoot, AppName, Storage, MinInstances, MaxInstances, PollInterval, ScaleOutCooldown, ScaleInCooldown, IdleToZero, KeepAlive, HistogramBin, HistogramMinSamples, HoldTimeout,
            DrainTimeout, StartTimeout, StopTimeout, HostDll, ListenAddress, Port, GrpcPort, MemberHttpPort, ShmRoot, Netns, LinkRate, NetnsPrefix, StatusView, Auth,
        };
        // The histogram's settings would do nothing under the fixed keep-alive: say so rather than ignore them.
        root.Validators.Add(r =>
        {
            // The token, not GetValue: a --keep-alive that did not parse has its own error already.
            OptionResult? given = r.GetResult(KeepAlive);
            if (given is { Implicit: false } && !given.Tokens.All(t => t.Value.Equals("fixed", StringComparison.OrdinalIgnoreCase)))
            {
                return;
            }

            foreach (Option option in new Option[] { HistogramBin, HistogramMinSamples })
            {
                if (r.GetResult(option) is { Implicit: false })
                {
                    r.AddError($"{option.Name} only applies with --keep-alive histogram");
                }
            }
        });
        root.SetAction((result, cancellationToken) => run(ToOptions(result), result.GetValue(StatusView), cancellationToken));
        return root;
    }

    private static ScaleControllerOptions ToOptions(ParseResult r)
    {
        string root = r.GetValue(ScriptRoot) is { Length: > 0 } given ? Path.GetFullPath(given) : "";
        return new ScaleControllerOptions
        {
            Instances = r.GetValue(Instances),
            ScriptRoot = root,
            AppName = r.GetValue(AppName) ?? Path.GetFileName(root.TrimEnd('/')),
            StorageConnection = r.GetValue(Storage) ?? Environment.GetEnvironmentVariable("AzureWebJobsStorage") ?? "",
            MinInstances = r.GetValue(MinInstances),
            MaxInstances = r.GetValue(MaxInstances),
            PollInterval = r.GetValue(PollInterval),
            ScaleOutCooldown = r.GetValue(ScaleOutCooldown),
            ScaleInCooldown = r.GetValue(ScaleInCooldown),
            IdleToZero = r.GetValue(IdleToZero),
            KeepAlive = r.GetValue(KeepAlive),
            Histogram = { BinWidth = r.GetValue(HistogramBin), MinSamples = r.GetValue(HistogramMinSamples) },
            HoldTimeout = r.GetValue(HoldTimeout),
            DrainTimeout = r.GetValue(DrainTimeout),
            StartTimeout = r.GetValue(StartTimeout),
            StopTimeout = r.GetValue(StopTimeout),
            // The environment's host only matters when launching; in membership mode only an explicit --host-dll is an error.
            HostDll = r.GetValue(HostDll) ?? (r.GetValue(Instances) == InstanceSourceMode.Launch ? Environment.GetEnvironmentVariable(HostDllVariable) : null) ?? "",
            ListenAddress = r.GetValue(ListenAddress)!,
            Port = r.GetValue(Port),
            GrpcPort = r.GetValue(GrpcPort),
            MemberHttpPort = r.GetValue(MemberHttpPort),
            SharedMemoryRoot = r.GetValue(ShmRoot)!,
            NetworkNamespaces = r.GetValue(Netns),
            LinkRateBytesPerSecond = r.GetValue(LinkRate),
            NamespacePrefix = r.GetValue(NetnsPrefix)!,
            EnforceKeys = r.GetValue(Auth) != "off",
        };
    }

    private static Option<TimeSpan> Seconds(string name, string description, double defaultSeconds) => new(name)
    {
        Description = description + string.Create(CultureInfo.InvariantCulture, $" Default {defaultSeconds}."),
        HelpName = "seconds",
        DefaultValueFactory = _ => TimeSpan.FromSeconds(defaultSeconds),
        CustomParser = r =>
        {
            string text = r.Tokens.Count > 0 ? r.Tokens[0].Value : "";
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds) && seconds < TimeSpan.MaxValue.TotalSeconds && seconds > -TimeSpan.MaxValue.TotalSeconds)
            {
                return TimeSpan.FromSeconds(seconds);
            }

            r.AddError($"{name} '{text}' must be a number of seconds");
            return default;
        },
    };

    /// <summary>An option that takes one of an enum's names (ignoring case; numbers are not names), the first one by default.</summary>
    private static Option<TEnum> Choice<TEnum>(string name, string description, TEnum defaultValue)
        where TEnum : struct, Enum
    {
        string names = string.Join(" or ", Enum.GetNames<TEnum>().Select(n => n.ToLowerInvariant()));
        return new Option<TEnum>(name)
        {
            Description = description,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = r =>
            {
                string text = r.Tokens.Count > 0 ? r.Tokens[0].Value : defaultValue.ToString().ToLowerInvariant();
                if (Enum.TryParse(text, ignoreCase: true, out TEnum value) && Enum.IsDefined(value) && !int.TryParse(text, out _))
                {
                    return value;
                }

                r.AddError($"{name} '{text}' must be {names}");
                return defaultValue;
            },
        };
    }
}
