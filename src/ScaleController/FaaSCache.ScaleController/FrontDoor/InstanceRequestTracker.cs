using Yarp.ReverseProxy;

namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>
/// In the proxy pipeline after load balancing: counts the request against the chosen instance for the drain. If that
/// instance was closed (drained) between routing and here, counts it into the instance with the fewest in flight instead
/// (<see cref="LeastInFlightPolicy.EnterFewestInFlight"/>, a draining one not yet closed if need be), so a scale-in never
/// fails a request.
/// </summary>
public sealed class InstanceRequestTracker(InstancePool pool, IProxyStateLookup proxy, LeastInFlightPolicy balancing)
{
    /// <summary>The proxy-pipeline step.</summary>
    public async Task InvokeAsync(HttpContext context, Func<Task> next)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(next);
        IReverseProxyFeature feature = context.GetReverseProxyFeature();
        ManagedInstance? entered = feature.AvailableDestinations.Count > 0
            ? LeastInFlightPolicy.TakeEntered(context, feature.AvailableDestinations[0].DestinationId) ?? Enter(feature.AvailableDestinations[0])
            : null;
        if (entered is null && feature.AvailableDestinations.Count > 0)
        {
            DestinationState? other = null;
            if (proxy.TryGetCluster(FrontDoorRoutes.ClusterId, out ClusterState? cluster) &&
                balancing.EnterFewestInFlight(cluster.DestinationsState.AvailableDestinations, drainingToo: true) is { } fallback)
            {
                (other, entered) = fallback;
            }

            if (other is null)
            {
                context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
                await context.Response.WriteAsync("Every instance is draining.", context.RequestAborted);
                return;
            }

            feature.AvailableDestinations = [other];
        }

        try
        {
            await next();
        }
        finally
        {
            entered?.Exit();
        }
    }

    private ManagedInstance? Enter(DestinationState destination) =>
        pool.Find(destination.DestinationId) is { State: InstanceState.Ready or InstanceState.Draining } instance && instance.TryEnter() ? instance : null;
}
