using FaaSCache.Hosting;
using FaaSCache.Host.Admin;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Host.Triggers;
using FaaSCache.Peers;
using FaaSCache.Scaling;
using FaaSCache.Security.Logging;
using FaaSCache.Security.Ports;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection.Extensions;
using OpenTelemetry.Metrics;

namespace FaaSCache.Host.Start;

/// <summary>
/// Builds the FaaSCache host's web application for a loaded app: Kestrel (HTTP triggers and admin, FunctionRpc for the
/// workers, the peer service), the cachelet through the one composition root
/// (<see cref="FaaSCacheServiceCollectionExtensions.AddFaaSCache(IServiceCollection, IConfiguration)"/>), the workers,
/// the invoker and the triggers, and the <c>FaaSCache</c> meter exported for Prometheus on <c>/metrics</c>.
/// </summary>
public static class HostApplication
{
    /// <summary>Builds the application; nothing listens until it starts.</summary>
    public static WebApplication Build(FunctionApp app, HostSettings settings)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { ContentRootPath = app.RootDirectory, Args = [] });
        builder.Logging.AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        });
        // No secret in any log line, whichever category writes it: the account keys of the app's connection strings now,
        // the function keys once the key store has them.
        var redactor = new SecretRedactor();
        redactor.Add(app.Settings.Values.Append(app.StorageConnection).Select(v => StorageConnectionString.TryParse(v)?.AccountKey));
        builder.Logging.AddSecretRedaction(redactor);
        AddAppConfiguration(builder.Configuration, app, settings);
        // The Blob REST API on loopback, so that SDK calls and SDK-type bindings read and write through the cache.
        // Each port carries its own services only, told apart by the connection's local port (docs/security.md).
        int workerPort = settings.WorkerPort == 0 ? Hosting.FreePorts.GetOtherThan(IPAddress.Loopback, settings.Port, settings.PeerPort) : settings.WorkerPort;
        SdkEndpointAddress? sdk = BlobEndpointHosting.Plan(settings.CacheEnabled, builder.Configuration, app.StorageConnection, settings.SdkPort, settings.Port, settings.PeerPort, workerPort);
        PortRoles roles = new PortRoles().Add(settings.Port, ListenerRole.Http).Add(workerPort, ListenerRole.Worker);
        if (settings.Membership)
        {
            roles.Add(settings.PeerPort, ListenerRole.Peers);
        }

        if (sdk is not null)
        {
            roles.Add(sdk.Port, ListenerRole.BlobEndpoint);
        }

        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Limits.MaxRequestBodySize = null;
            k.Listen(settings.ListenAddress, settings.Port, l => l.Protocols = HttpProtocols.Http1);
            // FunctionRpc: HTTP/2 cleartext on a port of its own, for the workers only.
            k.Listen(IPAddress.Loopback, workerPort, l => l.Protocols = HttpProtocols.Http2);
            if (settings.Membership)
            {
                k.ListenForPeers(new IPEndPoint(settings.PeerAddress, settings.PeerPort));
            }

            if (sdk is not null)
            {
                BlobEndpointHosting.Listen(k, sdk);
            }
        });

        IServiceCollection services = builder.Services;
        services.AddGrpc(o =>
        {
            o.MaxReceiveMessageSize = null;
            o.MaxSendMessageSize = null;
        });
        FaaSCacheBuilder cache = services.AddFaaSCache(builder.Configuration);
        if (settings.Membership)
        {
            // §3.2: the app's instances in one blob; the ring and the peer endpoints follow it. §4: the votes the scale
            // controller polls are served beside the peer service, behind the same key.
            cache.AddMembership().AddPeers(PeerServerHosting.HostServer).AddScaleVoteService();
        }

        cache.AddScaling();
        // §3.4: function memory (host and workers, from /proc) plus cached bytes stay below the limit less the headroom.
        cache.AddMemoryDaemon();
        if (settings.CacheEnabled)
        {
            // §3.3: snapshot at unload, Load Daemon at start (yielding to invocations).
            cache.AddPrewarm();
        }

        services.AddOpenTelemetry().WithMetrics(m => m.AddMeter(Diagnostics.CacheletMetrics.MeterName, HostLifecycle.MeterName).AddPrometheusExporter());
        services.AddSingleton(app);
        services.AddSingleton(settings);
        services.AddSingleton(roles);
        services.AddSingleton<HostLifecycle>();
        KeyAuthorizer keys = new(KeyStores.Create(name => app.Settings.TryGetValue(name, out string? value) ? value : null, app.RootDirectory), settings.EnforceKeys);
        services.AddSingleton(keys);
        if (keys.Enforced)
        {
            // Made (files) or checked (a mounted Secret) at start, as the Functions host does; a bad store stops start-up.
            keys.Store.EnsureSystemKey(BlobWebhookEndpoints.SystemKeyName);
            HostKeys hostKeys = keys.Store.GetHostKeys();
            redactor.Add([hostKeys.MasterKey, .. hostKeys.FunctionKeys.Values, .. hostKeys.SystemKeys.Values]);
        }
        services.AddSingleton<WorkerRegistry>();
        services.AddSingleton<IWorkerProcesses, WorkerProcesses>();
        if (settings.AccessLogPath is { } accessLog)
        {
            // Opened now: a path that cannot be written stops start-up with its name, not the first invocation. Given by a
            // factory so that the container disposes it at shutdown (which drains the rows still queued).
            var log = new AccessLog(accessLog, settings.AppName);
            services.AddSingleton(_ => log);
        }

        services.AddSingleton<InvocationLog>();
        if (sdk is not null)
        {
            services.AddSdkEndpoint(sdk, app.StorageConnection);
        }

        services.AddSingleton<IReadOnlyDictionary<string, LanguageWorkerManager>>(sp => CreateWorkers(app, settings, sdk, sp));
        // One blob binder per mode: through the cache, or as the stock host does.
        services.AddSingleton<IBlobBinder>(sp => settings.CacheEnabled
            ? new CachedBlobBinder(sp.GetRequiredService<IObjectCache>(), sp.GetRequiredService<SharedMemoryStore>())
            : new StockBlobBinder(sp.GetRequiredService<IBlobStore>(), sp.GetRequiredService<SharedMemoryStore>()));
        services.AddSingleton<HttpProxy>();
        services.AddSingleton<ResultCaching.ResultCache>();
        services.AddSingleton<FunctionInvoker>();
        services.AddSingleton<BlobTriggerService>();
        services.AddSingleton<WorkerHostedService>();
        services.AddHostedService(sp => sp.GetRequiredService<WorkerHostedService>());
        services.AddHostedService(sp => sp.GetRequiredService<BlobTriggerService>());
        services.TryAddSingleton(TimeProvider.System);
        services.AddHostedService<TimerTriggerService>();
        services.AddSingleton<Queues.StorageQueues>();
        services.AddHostedService<Queues.QueueTriggerService>();
        services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(15));

        WebApplication web = builder.Build();
        // Before routing: a worker-indexed app's routes exist only once its worker answered, so a request waits first.
        web.UseHostAvailability(web.Services.GetRequiredService<HostLifecycle>(), settings.Port, settings.ReadyTimeout);
        web.UseRouting();
        web.UsePortRoles(roles);
        if (sdk is not null)
        {
            web.MapSdkEndpoint(sdk);
        }

        // The master key for /admin and /metrics (the Functions host's admin level); ping stays open for probes.
        web.UseAdminKeys(keys, ["/admin", "/metrics"], [AdminEndpoints.PingPath, AdminEndpoints.ReadyPath]);
        web.MapGrpcService<FunctionRpcService>().ServedOn(ListenerRole.Worker);
        if (settings.Membership)
        {
            web.MapFaaSCachePeers().ServedOn(ListenerRole.Peers);
            web.MapFaaSCacheScaleVotes().ServedOn(ListenerRole.Peers);
        }

        ResultCaching.ResultCache results = web.Services.GetRequiredService<ResultCaching.ResultCache>();
        app.OnIndexed(functions => results.Activate(functions));
        HttpTriggerEndpoints.Map(web, app, web.Services.GetRequiredService<FunctionInvoker>(), keys, web.Services.GetRequiredService<ILoggerFactory>());
        BlobWebhookEndpoints.Map(web, web.Services.GetRequiredService<BlobTriggerService>(), keys);
        AdminEndpoints.Map(web);
        ScaleEndpoints.Map(web);
        web.MapPrometheusScrapingEndpoint("/metrics");
        return web;
    }

    /// <summary>
    /// The app's configuration as the cachelet reads it: host.json (its <c>extensions:faasCache</c> section), the app
    /// settings (local.settings.json's Values with the environment on top) and this instance's command-line settings
    /// under <c>FaaSCache:</c>.
    /// </summary>
    private static void AddAppConfiguration(ConfigurationManager configuration, FunctionApp app, HostSettings settings)
    {
        configuration.Sources.Clear();
        // Quiet frameworks by default; host.json's logging.logLevel (as the Functions host reads it) may say otherwise.
        configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["logging:logLevel:Microsoft.AspNetCore"] = "Warning",
            ["logging:logLevel:Grpc"] = "Warning",
            ["logging:logLevel:Yarp"] = "Warning",
        });
        configuration.AddJsonFile(Path.Combine(app.RootDirectory, "host.json"), optional: false, reloadOnChange: false);
        configuration.AddInMemoryCollection(app.Settings.Select(s => new KeyValuePair<string, string?>(s.Key, s.Value)));
        configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            [FaaSCacheInstanceOptions.StorageSetting] = app.StorageConnection,
            ["FaaSCache:InstanceId"] = settings.InstanceId,
            ["FaaSCache:AppName"] = settings.AppName,
            ["FaaSCache:PeerAddress"] = settings.PeerAddress.ToString(),
            ["FaaSCache:PeerPort"] = settings.PeerPort.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["FaaSCache:ScaleController"] = settings.ScaleController?.ToString(),
        });
    }

    private static Dictionary<string, LanguageWorkerManager> CreateWorkers(FunctionApp app, HostSettings settings, SdkEndpointAddress? sdk, IServiceProvider sp)
    {
        var shm = sp.GetRequiredService<SharedMemoryStore>();
        IReadOnlyDictionary<string, string> appSettings = sdk is null ? app.Settings : BlobEndpointHosting.PointWorkersAtEndpoint(app.Settings, app.StorageConnection, sdk);
        var environment = new Dictionary<string, string>(appSettings, StringComparer.Ordinal)
        {
            // Every usable directory, in the host's order: the worker opens a map in whichever holds it.
            [SharedMemoryStore.DirectoriesSetting] = string.Join(',', shm.MapDirectories.Select(Path.GetDirectoryName)),
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
}
