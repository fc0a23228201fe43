using System.Globalization;
using System.Net;
using System.Text;
using FaaSCache.Caching;
using FaaSCache.Host.Admin;
using FaaSCache.Host.AppModel;
using FaaSCache.Host.Invocation;
using FaaSCache.Host.Triggers;
using FaaSCache.Host.Workers;
using FaaSCache.Membership;
using FaaSCache.Options;
using FaaSCache.Peers;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace FaaSCache.Host.Start;

/// <summary><c>start --script-root &lt;app&gt; --port &lt;p&gt;</c>: runs a function app, as Core Tools' <c>func start</c> does.</summary>
public static class StartCommand
{
    private static readonly string[] SupportedBindings = ["httpTrigger", "http", "blob", "blobTrigger"];

    /// <summary>Parses the command line.</summary>
    public static HostSettings Parse(string[] args)
    {
        Dictionary<string, string> o = CommandLineException.ParseOptions(
            args, "--script-root", "--port", "--cache", "--instance-id", "--workers-dir", "--blob-poll-interval", "--app-name", "--membership", "--peer-port", "--peer-address");
        string root = Path.GetFullPath(o.GetValueOrDefault("--script-root") ?? Directory.GetCurrentDirectory());
        int port = 7071;
        // Port 0 is refused: the FunctionRpc listener also takes an ephemeral port, and with both ephemeral the
        // host cannot tell them apart (it handed workers the HTTP/1 address, so they never connected).
        if (o.TryGetValue("--port", out string? p) && (!int.TryParse(p, CultureInfo.InvariantCulture, out port) || port is < 1 or > 65535))
        {
            throw new CommandLineException($"--port '{p}' is not a port number (1..65535)");
        }

        bool cache = o.GetValueOrDefault("--cache", "on") switch
        {
            "on" => true,
            "off" => false,
            string other => throw new CommandLineException($"--cache '{other}' must be on or off"),
        };
        double poll = 2;
        if (o.TryGetValue("--blob-poll-interval", out string? interval) && (!double.TryParse(interval, CultureInfo.InvariantCulture, out poll) || poll <= 0))
        {
            throw new CommandLineException($"--blob-poll-interval '{interval}' must be a positive number of seconds");
        }

        bool membership = o.GetValueOrDefault("--membership", "on") switch
        {
            "on" => true,
            "off" => false,
            string other => throw new CommandLineException($"--membership '{other}' must be on or off"),
        };
        int peerPort = 0;
        if (o.TryGetValue("--peer-port", out string? pp) && (!int.TryParse(pp, CultureInfo.InvariantCulture, out peerPort) || peerPort is < 1 or > 65535))
        {
            throw new CommandLineException($"--peer-port '{pp}' is not a port number (1..65535)");
        }

        IPAddress peerAddress = IPAddress.Loopback;
        if (o.TryGetValue("--peer-address", out string? pa) && !IPAddress.TryParse(pa, out peerAddress!))
        {
            throw new CommandLineException($"--peer-address '{pa}' is not an IP address");
        }

        return new HostSettings
        {
            AppName = o.GetValueOrDefault("--app-name") ?? Path.GetFileName(root.TrimEnd('/')),
            Membership = membership && cache,
            PeerAddress = peerAddress,
            PeerPort = peerPort != 0 ? peerPort : FreePort(peerAddress),
            ScriptRoot = root,
            Port = port,
            CacheEnabled = cache,
            InstanceId = o.GetValueOrDefault("--instance-id") ?? $"host-{port}",
            WorkersDirectory = o.GetValueOrDefault("--workers-dir") ?? FindWorkersDirectory(),
            BlobPollInterval = TimeSpan.FromSeconds(poll),
        };
    }

    /// <summary>Runs until Ctrl+C / SIGTERM.</summary>
    public static async Task<int> RunAsync(string[] args)
    {
        HostSettings settings = Parse(args);
        FunctionApp app;
        try
        {
            app = FunctionAppLoader.Load(settings.ScriptRoot, settings.WorkersDirectory);
            CheckBindings(app);
        }
        catch (AppLoadException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot start the app: {e.Message}");
            return 1;
        }

        await using WebApplication web = Build(app, settings);
        try
        {
            await web.StartAsync();
        }
        catch (IOException e)
        {
            await Console.Error.WriteLineAsync($"FaaSCache host: cannot listen on port {settings.Port}: {e.Message}");
            return 1;
        }

        Uri httpUri = Addresses(web, settings.Port);
        Uri grpcUri = web.Services.GetRequiredService<WorkerHostedService>().GrpcUri!;
        Console.WriteLine(Banner(app, settings, web.Services, httpUri, grpcUri));

        // On Ctrl+C / SIGTERM: workers end first (WorkerHostedService), then the server, then the
        // container disposes the cachelet: async writes flushed, maps removed.
        await web.WaitForShutdownAsync();
        return 0;
    }

    private static WebApplication Build(FunctionApp app, HostSettings settings)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { ContentRootPath = app.RootDirectory, Args = [] });
        builder.Logging.AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        });
        builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
        builder.Logging.AddFilter("Grpc", LogLevel.Warning);
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Limits.MaxRequestBodySize = null;
            k.Listen(IPAddress.Loopback, settings.Port, l => l.Protocols = HttpProtocols.Http1);
            // FunctionRpc: HTTP/2 cleartext on a port of its own, for the workers only.
            k.Listen(IPAddress.Loopback, 0, l => l.Protocols = HttpProtocols.Http2);
            if (settings.Membership)
            {
                k.ListenForPeers(new IPEndPoint(settings.PeerAddress, settings.PeerPort));
            }
        });

        IServiceCollection services = builder.Services;
        services.AddGrpc(o =>
        {
            o.MaxReceiveMessageSize = null;
            o.MaxSendMessageSize = null;
        });
        services.AddSingleton(app);
        services.AddSingleton(settings);
        string? shmSetting = app.Settings.GetValueOrDefault(SharedMemoryStore.DirectoriesSetting);
        services.AddSingleton(sp => new SharedMemoryStore(
            settings.InstanceId,
            shmSetting is { Length: > 0 } ? shmSetting.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) : null,
            sp.GetRequiredService<ILogger<SharedMemoryStore>>()));
        services.AddSingleton<IBlobStore>(_ => AzureBlobStore.FromConnectionString(app.StorageConnection));
        if (settings.Membership)
        {
            // §3.2: the app's instances in one blob; the ring and the peer endpoints follow it.
            services.AddSingleton(sp => new MembershipDaemon(
                MembershipStore.Create(app.StorageConnection, settings.AppName),
                new MembershipDaemonOptions
                {
                    App = settings.AppName,
                    SelfId = settings.InstanceId,
                    SelfEndpoint = settings.PeerEndpoint,
                    HeartbeatInterval = app.CacheOptions.Membership.HeartbeatInterval,
                    FailureTimeout = app.CacheOptions.Membership.FailureTimeout,
                    VirtualNodes = app.CacheOptions.Membership.VirtualNodes,
                },
                logger: sp.GetRequiredService<ILogger<MembershipDaemon>>()));
            services.AddSingleton<IPeerDirectory>(sp => sp.GetRequiredService<MembershipDaemon>());
            services.AddFaaSCachePeers(PeerKey.FromConnectionString(app.StorageConnection, settings.AppName));
            services.AddSingleton<MembershipLifetime>();
            services.AddHostedService(sp => sp.GetRequiredService<MembershipLifetime>());
        }

        if (settings.CacheEnabled)
        {
            services.AddSingleton(sp => new Cachelet(
                app.CacheOptions,
                sp.GetRequiredService<IBlobStore>(),
                sp.GetRequiredService<SharedMemoryStore>(),
                owners: sp.GetService<MembershipDaemon>()?.Owners,
                logger: sp.GetRequiredService<ILogger<Cachelet>>(),
                ownsSharedMemory: false,
                peers: sp.GetService<IPeerClient>()));
        }

        services.AddSingleton<WorkerRegistry>();
        services.AddSingleton<InvocationLog>();
        services.AddSingleton<IReadOnlyDictionary<string, LanguageWorkerManager>>(sp => CreateWorkers(app, settings, sp));
        services.AddSingleton(sp => new FunctionInvoker(
            app,
            sp.GetService<Cachelet>(),
            sp.GetRequiredService<IBlobStore>(),
            sp.GetRequiredService<SharedMemoryStore>(),
            sp.GetRequiredService<IReadOnlyDictionary<string, LanguageWorkerManager>>(),
            sp.GetRequiredService<InvocationLog>(),
            sp.GetRequiredService<ILogger<FunctionInvoker>>()));
        services.AddSingleton(sp => new BlobTriggerService(
            app,
            sp.GetRequiredService<FunctionInvoker>(),
            sp.GetRequiredService<IBlobStore>(),
            settings,
            sp.GetRequiredService<ILogger<BlobTriggerService>>(),
            sp.GetService<Cachelet>(),
            sp.GetService<MembershipDaemon>()?.Owners));
        services.AddSingleton<WorkerHostedService>();
        services.AddHostedService(sp => sp.GetRequiredService<WorkerHostedService>());
        services.AddHostedService(sp => sp.GetRequiredService<BlobTriggerService>());
        services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

        WebApplication web = builder.Build();
        web.MapGrpcService<FunctionRpcService>();
        if (settings.Membership)
        {
            web.MapFaaSCachePeers().RequireHost($"*:{settings.PeerPort}");
        }

        HttpTriggerEndpoints.Map(web, app);
        AdminEndpoints.Map(web);
        return web;
    }

    private static Dictionary<string, LanguageWorkerManager> CreateWorkers(FunctionApp app, HostSettings settings, IServiceProvider sp)
    {
        var shm = sp.GetRequiredService<SharedMemoryStore>();
        var environment = new Dictionary<string, string>(app.Settings, StringComparer.Ordinal)
        {
            [SharedMemoryStore.DirectoriesSetting] = Path.GetDirectoryName(shm.MapDirectory)!,
            ["FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED"] = "1",
            ["AzureWebJobsScriptRoot"] = app.RootDirectory,
            ["PYTHONUNBUFFERED"] = "1",
        };
        var capabilities = new Dictionary<string, string>(StringComparer.Ordinal);
        if (settings.CacheEnabled)
        {
            // Outputs of any size come back in shared memory and the cache adopts the worker's maps.
            capabilities["FunctionDataCache"] = "true";
        }

        var loggers = sp.GetRequiredService<ILoggerFactory>();
        var registry = sp.GetRequiredService<WorkerRegistry>();
        return app.Workers.Values.ToDictionary(
            w => w.Language,
            w => new LanguageWorkerManager(w, app, registry, capabilities, environment, loggers),
            StringComparer.OrdinalIgnoreCase);
    }

    private static void CheckBindings(FunctionApp app)
    {
        foreach (FunctionDefinition f in app.Functions)
        {
            BindingDefinition? unsupported = f.Bindings.FirstOrDefault(b => !SupportedBindings.Contains(b.Type, StringComparer.OrdinalIgnoreCase));
            if (unsupported is not null)
            {
                throw new AppLoadException(
                    $"'{Path.Combine(f.Directory, "function.json")}': binding '{unsupported.Name}' has type '{unsupported.Type}', which this host does not serve (supported: {string.Join(", ", SupportedBindings)}).");
            }
        }
    }

    private static Uri Addresses(WebApplication web, int port)
    {
        var addresses = web.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a)).ToList();
        return port != 0 ? addresses.First(a => a.Port == port) : addresses[0];
    }

    private static string Banner(FunctionApp app, HostSettings settings, IServiceProvider services, Uri http, Uri grpc)
    {
        var shm = services.GetRequiredService<SharedMemoryStore>();
        var storage = services.GetRequiredService<IBlobStore>();
        FaaSCacheOptions o = app.CacheOptions;
        var text = new StringBuilder();
        text.AppendLine(CultureInfo.InvariantCulture, $"FaaSCache host: app '{app.Name}' ({app.RootDirectory})");
        text.AppendLine(CultureInfo.InvariantCulture, $"  HTTP           {http}");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Worker gRPC    {grpc} ({string.Join(", ", app.Workers.Keys)})");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Storage        {storage.AccountUri}");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Shared memory  {shm.MapDirectory} (instance {settings.InstanceId}{(shm.SweptAtStartup > 0 ? $", swept {shm.SweptAtStartup} stale maps" : string.Empty)})");
        text.AppendLine(settings.CacheEnabled
            ? string.Create(CultureInfo.InvariantCulture, $"  Cache          on: consistency {o.Consistency}, persist {o.EffectivePersist}, eviction {o.Eviction.Policy}, capacity {o.EffectiveCapacityBytes / (1024 * 1024)} MiB, doNotCache [{string.Join(", ", o.DoNotCache)}]")
            : "  Cache          off (stock behaviour: blob bytes inside the gRPC messages)");
        text.AppendLine(settings.Membership
            ? string.Create(CultureInfo.InvariantCulture, $"  Peers          {settings.PeerEndpoint} (app '{settings.AppName}', {services.GetRequiredService<MembershipDaemon>().Members.Count} member(s) now, ring of {app.CacheOptions.Membership.VirtualNodes} virtual nodes each)")
            : "  Peers          none (membership off: this instance owns every key)");
        text.AppendLine(CultureInfo.InvariantCulture, $"  Admin          {http}admin/host/status, {http}admin/invocations");
        text.AppendLine("  Functions:");
        foreach (FunctionDefinition f in app.Functions)
        {
            string trigger = f.Trigger.IsHttpTrigger
                ? $"[{(f.Methods.Count == 0 ? "ALL" : string.Join(",", f.Methods))}] {http}api/{f.Route}"
                : $"{f.Trigger.Type} {f.Trigger.Path}";
            text.AppendLine(CultureInfo.InvariantCulture, $"    {f.Name} ({f.Language}): {trigger}");
        }

        return text.ToString();
    }

    private static int FreePort(IPAddress address)
    {
        using var probe = new System.Net.Sockets.TcpListener(address, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    private static string FindWorkersDirectory()
    {
        string? fromEnvironment = Environment.GetEnvironmentVariable("FAASCACHE_WORKERS_DIR");
        if (!string.IsNullOrEmpty(fromEnvironment))
        {
            return fromEnvironment;
        }

        for (DirectoryInfo? d = new(AppContext.BaseDirectory); d is not null; d = d.Parent)
        {
            string candidate = Path.Combine(d.FullName, "src", "Workers");
            if (Directory.Exists(candidate))
            {
                return candidate;
            }
        }

        return Path.Combine(AppContext.BaseDirectory, "workers");
    }
}
