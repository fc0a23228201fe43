using System.Net;
using FaaSCache.Keda;
using FaaSCache.Peers;
using FaaSCache.ScaleController.Decisions;
using FaaSCache.ScaleController.FrontDoor;
using FaaSCache.ScaleController.Grpc;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;
using FaaSCache.ScaleController.Status;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Yarp.ReverseProxy.Configuration;

namespace FaaSCache.ScaleController;

/// <summary>
/// The controller's composition root: the front door and <c>/scale/status</c> on <see cref="ScaleControllerOptions.Port"/>
/// (HTTP/1.1), the urgent-vote gRPC service on <see cref="ScaleControllerOptions.GrpcPort"/> (HTTP/2), the poll loop,
/// and the instance pool. Used by the executable and, in process, by the tests.
/// </summary>
public static class ScaleControllerApp
{
    /// <summary>Validates <paramref name="options"/> (throws <see cref="OptionsValidationException"/> naming every bad key), resolves port 0 to free ports, and builds the app.</summary>
    public static WebApplication Build(ScaleControllerOptions options, bool statusView = false, Action<ILoggingBuilder>? logging = null, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ValidateOptionsResult valid = new ScaleControllerOptionsValidator().Validate(null, options);
        if (valid.Failed)
        {
            throw new OptionsValidationException(nameof(ScaleControllerOptions), typeof(ScaleControllerOptions), valid.Failures);
        }

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
        IServiceCollection services = builder.Services;
        services.AddSingleton(options);
        services.AddSingleton(clock);
        services.AddSingleton<IInstanceNetwork>(options.NetworkNamespaces ? new NamespaceNetwork(options) : new SharedNetwork(options.ListenAddress, options.StorageConnection));
        services.AddSingleton<IInstanceLauncher>(sp => new HostProcessLauncher(options, sp.GetRequiredService<IInstanceNetwork>(), sp.GetRequiredService<ILogger<HostProcessLauncher>>(), clock));
        services.AddSingleton<InstancePool>();
        if (options.NetworkNamespaces)
        {
            services.AddHostedService<NamespaceHousekeeping>();
        }

        services.AddHostedService<InstancePoolLifetime>();

        services.Configure<Microsoft.Extensions.Hosting.HostOptions>(h => h.ShutdownTimeout = options.DrainTimeout + options.StopTimeout + TimeSpan.FromSeconds(10));
        services.AddSingleton(sp => new ScalePolicy(options, clock));
        services.AddSingleton(new DecisionHistory(options.HistorySize));
        services.AddSingleton<ScaleDecisionState>();
        services.AddSingleton<IScaleDecisions>(sp => sp.GetRequiredService<ScaleDecisionState>());
        services.AddSingleton<FrontDoorTraffic>();
        services.AddSingleton<ScaleCoordinator>();
        services.AddSingleton<ScaleStatusSource>();
        services.AddSingleton<InstanceRequestTracker>();
        services.AddSingleton(sp => new InstanceVoteClient(key, clock));
        services.AddSingleton<ScaleLoop>();
        services.AddHostedService(sp => sp.GetRequiredService<ScaleLoop>());
        if (statusView)
        {
            services.AddHostedService<LiveStatusView>();
        }

        services.Configure<PeerServerOptions>(o => o.Key = key);
        services.AddGrpc().AddServiceOptions<ScaleControllerService>(o => o.Interceptors.Add<PeerAuthInterceptor>());
        (IReadOnlyList<RouteConfig> routes, IReadOnlyList<ClusterConfig> clusters) = FrontDoorRoutes.Initial();
        services.AddReverseProxy().LoadFromMemory(routes, clusters);
        services.AddSingleton<FrontDoorRoutes>();
        services.ConfigureHttpJsonOptions(j => j.SerializerOptions.Converters.Add(new System.Text.Json.Serialization.JsonStringEnumConverter()));

        WebApplication app = builder.Build();
        app.Services.GetRequiredService<FrontDoorRoutes>(); // subscribes the routes to the pool before anything starts
        app.UseRouting();
        app.UseMiddleware<HoldForInstanceMiddleware>();
        app.MapGet("/scale/status", (ScaleStatusSource status) => status.Read()).RequireHost($"*:{options.Port}");
        app.MapGrpcService<ScaleControllerService>().RequireHost($"*:{options.GrpcPort}");
        InstanceRequestTracker tracker = app.Services.GetRequiredService<InstanceRequestTracker>();
        app.MapReverseProxy(proxy =>
        {
            proxy.UseLoadBalancing();
            proxy.Use((context, next) => tracker.InvokeAsync(context, () => next()));
        }).RequireHost($"*:{options.Port}");
        return app;
    }

}
