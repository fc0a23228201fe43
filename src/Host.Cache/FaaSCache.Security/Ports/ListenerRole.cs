namespace FaaSCache.Security.Ports;

/// <summary>
/// What one listening port carries. Endpoints say which role serves them (<see cref="PortRoleExtensions.ServedOn{TBuilder}"/>);
/// a connection's role is its local port's, never the Host header (the client's to choose).
/// </summary>
/// <param name="Name">The role's name, for logs and messages.</param>
public sealed record ListenerRole(string Name)
{
    /// <summary>HTTP triggers, <c>/admin</c>, <c>/metrics</c>, webhooks: the port users and the front door call.</summary>
    public static readonly ListenerRole Http = new("http");

    /// <summary>FunctionRpc, for the host's own language workers.</summary>
    public static readonly ListenerRole Worker = new("worker");

    /// <summary>The cachelets' peer services and the scale votes (behind the app's peer key).</summary>
    public static readonly ListenerRole Peers = new("peers");

    /// <summary>The Blob REST API served to the app's storage SDK calls.</summary>
    public static readonly ListenerRole BlobEndpoint = new("blob-endpoint");

    /// <summary>The scale controller's gRPC: votes from instances and KEDA's external scaler.</summary>
    public static readonly ListenerRole ScaleGrpc = new("scale-grpc");

    /// <inheritdoc />
    public override string ToString() => Name;
}

/// <summary>Endpoint metadata: the role whose port serves the endpoint (endpoints without it are served on <see cref="ListenerRole.Http"/>).</summary>
/// <param name="Role">The role.</param>
public sealed record ServedOnMetadata(ListenerRole Role);
