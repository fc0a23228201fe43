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
    private readonly Func<IReadOnlyList<ManagedInstance>> _ready;
    private readonly string _policy;
    private readonly Func<ManagedInstance, Uri?> _endpoint;
    private readonly Lock _gate = new();
    private string _applied = "";

    /// <summary>Initializes a new instance of the <see cref="FrontDoorRoutes"/> class and subscribes to the pool's changes.</summary>
    public FrontDoorRoutes(InMemoryConfigProvider config, InstancePool pool)
        : this(config, (pool ?? throw new ArgumentNullException(nameof(pool))).Ready, h => pool.Changed += h, LeastInFlightPolicy.PolicyName, i => i.Process?.HttpEndpoint)
    {
    }

    /// <summary>
    /// Initializes a new instance of the <see cref="FrontDoorRoutes"/> class over the members of the app's membership blob
    /// (membership mode with a member HTTP port): each member at its advertised address and <paramref name="memberHttpPort"/>,
    /// round robin (the controller counts no requests of its own there, as a Service does not).
    /// </summary>
    public FrontDoorRoutes(InMemoryConfigProvider config, MembershipInstanceSource members, int memberHttpPort)
        : this(config, (members ?? throw new ArgumentNullException(nameof(members))).Ready, h => members.Changed += h, MemberPolicy, i => MemberHttp(i, memberHttpPort))
    {
    }

    private FrontDoorRoutes(InMemoryConfigProvider config, Func<IReadOnlyList<ManagedInstance>> ready, Action<EventHandler> subscribe, string policy, Func<ManagedInstance, Uri?> endpoint)
    {
        _config = config;
        _ready = ready;
        _policy = policy;
        _endpoint = endpoint;
        subscribe((_, _) => Update());
        Update();
    }

    /// <summary>Yarp's round robin: the members' balancing (a Service's; the controller counts no requests of its own there).</summary>
    public const string MemberPolicy = "RoundRobin";

    /// <summary>The initial (empty) route table, for <c>LoadFromMemory</c>: launch mode's balancing, or the members' (<paramref name="members"/>).</summary>
    public static (IReadOnlyList<RouteConfig> Routes, IReadOnlyList<ClusterConfig> Clusters) Initial(bool members = false) => Build([], members ? MemberPolicy : LeastInFlightPolicy.PolicyName);

    /// <summary>A member's HTTP endpoint: its advertised (peer) address with the members' HTTP port.</summary>
    public static Uri? MemberHttp(ManagedInstance instance, int port) =>
        instance?.PeerEndpoint is { } peer ? new UriBuilder("http", peer.Host, port, "/").Uri : null;

    private static (IReadOnlyList<RouteConfig> Routes, IReadOnlyList<ClusterConfig> Clusters) Build(IReadOnlyList<(string Id, Uri Endpoint)> ready, string policy)
    {
        var route = new RouteConfig { RouteId = RouteId, ClusterId = ClusterId, Match = new RouteMatch { Path = "/api/{**rest}" } };
        var cluster = new ClusterConfig
        {
            ClusterId = ClusterId,
            LoadBalancingPolicy = policy,
            Destinations = ready.ToDictionary(i => i.Id, i => new DestinationConfig { Address = i.Endpoint.ToString() }, StringComparer.Ordinal),
        };
        return ([route], [cluster]);
    }

    private void Update()
    {
        List<(string Id, Uri Endpoint)> ready = [.. _ready().Select(i => (i.Id, Endpoint: _endpoint(i))).Where(i => i.Endpoint is not null).Select(i => (i.Id, i.Endpoint!))];
        string key = string.Join(',', ready.Select(i => $"{i.Id}={i.Endpoint}"));
        lock (_gate)
        {
            if (key == _applied)
            {
                return;
            }

            _applied = key;
            (IReadOnlyList<RouteConfig> routes, IReadOnlyList<ClusterConfig> clusters) = Build(ready, _policy);
            _config.Update(routes, clusters);
        }
    }
}
