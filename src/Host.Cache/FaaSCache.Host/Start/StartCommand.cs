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
using FaaSCache.Ownership;
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

    /// <summary>Runs until Ctrl+C / SIGTERM.</summary>
    public static async Task<int> RunAsync(HostSettings settings)
    {
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
}
