using FaaSCache.ScaleController.Instances;
using Yarp.ReverseProxy.Configuration;

namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>
/// Keeps Yarp's routes in step with the pool: <c>/api/{**rest}</c> to one cluster whose destinations are the ready
/// instances, balanced by the fewest requests in flight (<see cref="LeastInFlightPolicy"/>). A draining instance leaves the cluster before it is stopped.
/// </summary>
public sealed class FrontDoorRoutes
{
    /// <summary>The cluster of the app's instances.</summary>
    public const string ClusterId = "app";

    private const string RouteId = "app-api";
    private readonly InMemoryConfigProvider _config;
    private readonly InstancePool _pool;
    private readonly Lock _gate = new();
    private string _applied = "";

    /// <summary>Initializes a new instance of the <see cref="FrontDoorRoutes"/> class and subscribes to the pool's changes.</summary>
    public FrontDoorRoutes(InMemoryConfigProvider config, InstancePool pool)
    {
        ArgumentNullException.ThrowIfNull(pool);
        _config = config;
        _pool = pool;
        pool.Changed += (_, _) => Update();
        Update();
    }

    /// <summary>The initial (empty) route table, for <c>LoadFromMemory</c>.</summary>
    public static (IReadOnlyList<RouteConfig> Routes, IReadOnlyList<ClusterConfig> Clusters) Initial() => Build([]);

    private static (IReadOnlyList<RouteConfig> Routes, IReadOnlyList<ClusterConfig> Clusters) Build(IReadOnlyList<ManagedInstance> ready)
    {
        var route = new RouteConfig { RouteId = RouteId, ClusterId = ClusterId, Match = new RouteMatch { Path = "/api/{**rest}" } };
        var cluster = new ClusterConfig
        {
            ClusterId = ClusterId,
            LoadBalancingPolicy = LeastInFlightPolicy.PolicyName,
            Destinations = ready.Where(i => i.Process is not null).ToDictionary(i => i.Id, i => new DestinationConfig { Address = i.Process!.HttpEndpoint.ToString() }, StringComparer.Ordinal),
        };
        return ([route], [cluster]);
    }

    private void Update()
    {
        IReadOnlyList<ManagedInstance> ready = _pool.Ready();
        string key = string.Join(',', ready.Select(i => i.Id));
        lock (_gate)
        {
            if (key == _applied)
            {
                return;
            }

            _applied = key;
            (IReadOnlyList<RouteConfig> routes, IReadOnlyList<ClusterConfig> clusters) = Build(ready);
            _config.Update(routes, clusters);
        }
    }
}
