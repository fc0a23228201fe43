using FaaSCache.Cluster;
using FaaSCache.Hosting;
using FaaSCache.Keda;
using FaaSCache.ScaleController.Grpc;
using FaaSCache.ScaleController.Status;
using FaaSCache.Security.Keys;
using FaaSCache.Security.Logging;
using FaaSCache.Security.Ports;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Yarp.ReverseProxy.Configuration;

namespace FaaSCache.ScaleController;

/// <summary>
/// The controller's composition root: the front door and <c>/scale/status</c> on <see cref="ScaleControllerOptions.Port"/>
/// (HTTP/1.1), the urgent-vote gRPC service on <see cref="ScaleControllerOptions.GrpcPort"/> (HTTP/2), the poll loop,
/// and the instance pool. Used by the executable and, in process, by the tests.
/// </summary>
public static class ScaleControllerApp
{
    /// <summary>Validates <paramref name="options"/> (throws <see cref="FaaSCacheConfigurationException"/> naming every bad key), resolves port 0 to free ports, and builds the app.</summary>
    public static WebApplication Build(ScaleControllerOptions options, bool statusView = false, Action<ILoggingBuilder>? logging = null, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _ = new ScaleControllerOptionsValidator().ThrowIfInvalid(options);

        options.Port = options.Port == 0 ? FreePorts.Get(options.ListenAddress) : options.Port;
        options.GrpcPort = options.GrpcPort == 0 ? FreePorts.Get(options.ListenAddress) : options.GrpcPort;
        TimeProvider clock = time ?? TimeProvider.System;
        PeerKey key = PeerKey.FromConnectionString(options.StorageConnection, options.AppName);

        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        logging?.Invoke(builder.Logging);
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Listen(options.ListenAddress, options.Port, l => l.Protocols = HttpProtocols.Http1);
            k.Listen(options.ListenAddress, options.GrpcPort, l => l.Protocols = HttpProtocols.Http2);
        });
        builder.Logging.AddFilter("Yarp", LogLevel.Warning);
        var redactor = new SecretRedactor();
        redactor.Add([ConnectionKey(options.StorageConnection)]);
        builder.Logging.AddSecretRedaction(redactor);
        // Each port carries its own services only, by the connection's local port (never the Host header).
        PortRoles roles = new PortRoles().Add(options.Port, ListenerRole.Http).Add(options.GrpcPort, ListenerRole.ScaleGrpc);
        var keys = new KeyAuthorizer(
            KeyStores.Create(Environment.GetEnvironmentVariable, options.ScriptRoot.Length > 0 ? options.ScriptRoot : Directory.GetCurrentDirectory()),
            options.EnforceKeys);
        if (keys.Enforced)
        {
            HostKeys hostKeys = keys.Store.GetHostKeys();
            redactor.Add([hostKeys.MasterKey, .. hostKeys.FunctionKeys.Values, .. hostKeys.SystemKeys.Values]);
        }

        IServiceCollection services = builder.Services;
        services.AddSingleton(options);
        services.AddSingleton(keys);
        services.AddSingleton(clock);
        bool launch = options.Instances == InstanceSourceMode.Launch;
        if (launch)
        {
            AddLauncher(services, options, clock);
        }
        else
        {
            services.AddSingleton(sp => new MembershipInstanceSource(
                MembershipStore.Create(options.StorageConnection, options.AppName, _logger: sp.GetRequiredService<ILogger<MembershipStore>>()),
                clock,
                sp.GetRequiredService<ILogger<MembershipInstanceSource>>()));
            services.AddSingleton<IInstanceSource>(sp => sp.GetRequiredService<MembershipInstanceSource>());
        }

        services.Configure<Microsoft.Extensions.Hosting.HostOptions>(h => h.ShutdownTimeout = options.DrainTimeout + options.StopTimeout + TimeSpan.FromSeconds(10));
        AddKeepAlive(services, options, clock);
        services.AddSingleton(new DecisionHistory(options.HistorySize));
        services.AddSingleton<ScaleDecisionState>();
        services.AddSingleton<IScaleDecisions>(sp => sp.GetRequiredService<ScaleDecisionState>());
        services.AddSingleton<FrontDoorTraffic>();
        services.AddSingleton<ScaleCoordinator>();
        services.AddSingleton<ScaleStatusSource>();
        services.AddSingleton<KeepAliveStatusSource>();
        services.AddSingleton(sp => new InstanceVoteClient(key, clock));
        services.AddSingleton<ScaleLoop>();
        services.AddHostedService(sp => sp.GetRequiredService<ScaleLoop>());
        if (statusView)
        {
            services.AddHostedService<LiveStatusView>();
        }

        services.Configure<PeerServerOptions>(o => o.Key = key);
        services.AddGrpc().AddServiceOptions<ScaleControllerService>(o => o.Interceptors.Add<PeerAuthInterceptor>());
        // KEDA's external-scaler face on the same gRPC port: the same decisions, read by KEDA's operator (no peer key:
        // KEDA cannot send one; the port is cluster-internal, as deploy/kubernetes/ sets it up).
        services.AddFaaSCacheKeda();
        bool memberFrontDoor = !launch && options.MemberHttpPort is not null;
        if (launch || memberFrontDoor)
        {
            (IReadOnlyList<RouteConfig> routes, IReadOnlyList<ClusterConfig> clusters) = FrontDoorRoutes.Initial(members: !launch);
            services.AddReverseProxy().LoadFromMemory(routes, clusters);
            services.AddSingleton(sp => launch
                ? new FrontDoorRoutes(sp.GetRequiredService<InMemoryConfigProvider>(), sp.GetRequiredService<InstancePool>())
                : new FrontDoorRoutes(sp.GetRequiredService<InMemoryConfigProvider>(), sp.GetRequiredService<MembershipInstanceSource>(), options.MemberHttpPort!.Value));
        }

        if (launch)
        {
            services.AddSingleton<LeastInFlightPolicy>();
            services.AddSingleton<Yarp.ReverseProxy.LoadBalancing.ILoadBalancingPolicy>(sp => sp.GetRequiredService<LeastInFlightPolicy>());
        }

        services.ConfigureHttpJsonOptions(j => j.SerializerOptions.Converters.Add(new System.Text.Json.Serialization.JsonStringEnumConverter()));

        WebApplication app = builder.Build();
        app.UseRouting();
        app.UsePortRoles(roles);
        app.UseAdminKeys(keys, ["/scale"], []);
        if (launch || memberFrontDoor)
        {
            app.Services.GetRequiredService<FrontDoorRoutes>(); // subscribes the routes to the pool before anything starts
        }

        if (launch)
        {
            app.UseMiddleware<HoldForInstanceMiddleware>();
        }

        app.MapGet("/scale/status", (ScaleStatusSource status) => status.Read());
        app.MapGrpcService<ScaleControllerService>().ServedOn(ListenerRole.ScaleGrpc);
        app.MapFaaSCacheKeda().ServedOn(ListenerRole.ScaleGrpc);
        if (launch)
        {
            MapFrontDoor(app, options);
        }
        else if (memberFrontDoor)
        {
            // The members at their advertised address and the members' HTTP port, round robin, as a Service spreads them.
            app.MapReverseProxy();
        }
        else
        {
            // Membership mode routes nothing: the app's requests go to its own Service; say so rather than a bare 404.
            app.Map("/api/{**rest}", () => Results.Problem(
                $"This controller runs with --instances membership: it only decides the instance count of '{options.AppName}' (for KEDA) and routes no requests; send /api/* to the app's host Service (or start the controller with --member-http-port to route them to the members).",
                statusCode: StatusCodes.Status501NotImplemented,
                title: "No front door in membership mode"));
        }

        return app;
    }

    // The account key of a connection string (AccountKey=...), to keep it out of every log line.
    private static string? ConnectionKey(string connection) =>
        connection.Split(';').Select(p => p.Trim()).FirstOrDefault(p => p.StartsWith("AccountKey=", StringComparison.OrdinalIgnoreCase))?["AccountKey=".Length..];

    // The idle rule: fixed (idleToZero) or the hybrid histogram, whose keeper loads its state before the poll loop starts.
    private static void AddKeepAlive(IServiceCollection services, ScaleControllerOptions options, TimeProvider clock)
    {
        if (options.KeepAlive != KeepAliveMode.Histogram)
        {
            services.AddSingleton(sp => new ScalePolicy(options, clock));
            return;
        }

        services.AddSingleton(new HybridHistogramPolicy(options.Histogram, clock));
        services.AddSingleton(new HistogramStateStore(options.StorageConnection));
        services.AddSingleton<HistogramKeeper>();
        services.AddHostedService(sp => sp.GetRequiredService<HistogramKeeper>());
        services.AddSingleton(sp => new ScalePolicy(options, clock, new HistogramKeepAlive(sp.GetRequiredService<HybridHistogramPolicy>(), options.AppName)));
    }

    // Launch mode: the instances are host processes on this machine (optionally each in its own network namespace).
    private static void AddLauncher(IServiceCollection services, ScaleControllerOptions options, TimeProvider clock)
    {
        services.AddSingleton<IInstanceNetwork>(options.NetworkNamespaces ? new NamespaceNetwork(options) : new SharedNetwork(options.ListenAddress, options.StorageConnection));
        services.AddSingleton<IInstanceLauncher>(sp => new HostProcessLauncher(options, sp.GetRequiredService<IInstanceNetwork>(), sp.GetRequiredService<ILogger<HostProcessLauncher>>(), clock, sp.GetRequiredService<KeyAuthorizer>()));
        services.AddSingleton<InstancePool>();
        services.AddSingleton<IInstanceSource>(sp => sp.GetRequiredService<InstancePool>());
        services.AddSingleton<InstanceRequestTracker>();
        if (options.NetworkNamespaces)
        {
            services.AddHostedService<NamespaceHousekeeping>();
        }

        services.AddHostedService<InstancePoolLifetime>();
    }

    // Launch mode's front door: /api/* over the ready instances, fewest in flight (counted at the pick), for the drain too.
    private static void MapFrontDoor(WebApplication app, ScaleControllerOptions options)
    {
        InstanceRequestTracker tracker = app.Services.GetRequiredService<InstanceRequestTracker>();
        app.MapReverseProxy(proxy =>
        {
            proxy.UseLoadBalancing();
            proxy.Use((context, next) => tracker.InvokeAsync(context, () => next()));
        });
    }
}
