using Yarp.ReverseProxy.LoadBalancing;

namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>
/// The front door's balancing: the ready instance with the fewest requests in flight, counted in the same step as the
/// pick (under one lock), ties taken in turn. Yarp's own <c>LeastRequests</c> counts a request only once it is forwarded,
/// so a burst of simultaneous requests all saw the same counts and went to one instance.
/// </summary>
public sealed class LeastInFlightPolicy(InstancePool pool) : ILoadBalancingPolicy
{
    /// <summary>The policy's name, for <see cref="Yarp.ReverseProxy.Configuration.ClusterConfig.LoadBalancingPolicy"/>.</summary>
    public const string PolicyName = "FaaSCacheLeastInFlight";

    private static readonly object EnteredKey = new();
    private readonly Lock _gate = new();
    private int _turn;

    /// <inheritdoc/>
    public string Name => PolicyName;

    /// <summary>The instance this request was already counted in by the pick, if any (and forgets it).</summary>
    public static ManagedInstance? TakeEntered(HttpContext context, string destinationId)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Items.Remove(EnteredKey, out object? value) && value is ManagedInstance instance)
        {
            if (instance.Id == destinationId)
            {
                return instance;
            }

            instance.Exit();
        }

        return null;
    }

    /// <inheritdoc/>
    public DestinationState? PickDestination(HttpContext context, ClusterState cluster, IReadOnlyList<DestinationState> availableDestinations)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(availableDestinations);
        if (EnterFewestInFlight(availableDestinations, drainingToo: false) is not { } picked)
        {
            // No ready instance could take it (all draining): the tracker finds another or answers 503.
            return availableDestinations.Count > 0 ? availableDestinations[0] : null;
        }

        context.Items[EnteredKey] = picked.Instance;
        return picked.Destination;
    }

    /// <summary>
    /// Counts one request into the instance of <paramref name="destinations"/> with the fewest in flight (ties in turn)
    /// and returns it; with <paramref name="drainingToo"/> a draining instance that is not closed yet may take it (the
    /// tracker's last resort, rather than a 503). Null when none could.
    /// </summary>
    internal (DestinationState Destination, ManagedInstance Instance)? EnterFewestInFlight(IReadOnlyList<DestinationState> destinations, bool drainingToo)
    {
        int count = destinations.Count;
        lock (_gate)
        {
            int start = count == 0 ? 0 : _turn++ % count;
            for (int attempt = 0; attempt < count; attempt++)
            {
                DestinationState? best = null;
                ManagedInstance? bestInstance = null;
                for (int n = 0; n < count; n++)
                {
                    DestinationState candidate = destinations[(start + n) % count];
                    if (pool.Find(candidate.DestinationId) is { } instance &&
                        (instance.State == InstanceState.Ready || (drainingToo && instance.State == InstanceState.Draining)) &&
                        (bestInstance is null || instance.InFlight < bestInstance.InFlight))
                    {
                        best = candidate;
                        bestInstance = instance;
                    }
                }

                if (bestInstance is null)
                {
                    return null;
                }

                if (bestInstance.TryEnter())
                {
                    return (best!, bestInstance);
                }
            }

            return null;
        }
    }
}
