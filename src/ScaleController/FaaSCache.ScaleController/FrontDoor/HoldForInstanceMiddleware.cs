using Yarp.ReverseProxy;

namespace FaaSCache.ScaleController.FrontDoor;

/// <summary>
/// Runs before the proxy for requests routed to the app: counts them (the idle rule reads it) and, while the app has no
/// routable instance, HOLDS them: the first held request triggers the scale from zero, and each waits for the first
/// ready instance up to <see cref="ScaleControllerOptions.HoldTimeout"/>, else gets 503 with the reason.
/// </summary>
public sealed class HoldForInstanceMiddleware(
    RequestDelegate next,
    FrontDoorTraffic traffic,
    InstancePool pool,
    ScaleCoordinator coordinator,
    IProxyStateLookup proxy,
    ScaleControllerOptions options,
    TimeProvider time,
    ILogger<HoldForInstanceMiddleware> logger)
{
    // Yarp applies a route update asynchronously after the pool's change; re-check at this pace meanwhile.
    private static readonly TimeSpan Recheck = TimeSpan.FromMilliseconds(50);

    /// <summary>Handles one request.</summary>
    public async Task InvokeAsync(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.GetEndpoint()?.Metadata.GetMetadata<RouteModel>() is null)
        {
            await next(context);
            return;
        }

        using IDisposable counted = traffic.Begin();
        if (!HasDestinations())
        {
            long started = time.GetTimestamp();
            using (traffic.Hold())
            {
                coordinator.OnHeldRequest();
                while (!HasDestinations())
                {
                    TimeSpan left = options.HoldTimeout - time.GetElapsedTime(started);
                    if (left <= TimeSpan.Zero)
                    {
                        await RefuseAsync(context);
                        return;
                    }

                    try
                    {
                        await Task.WhenAny(pool.WhenChanged, Task.Delay(left < Recheck ? left : Recheck, time, context.RequestAborted));
                    }
                    catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
                    {
                        return; // the client gave up
                    }
                }
            }

            logger.LogInformation("Held {Method} {Path} for {Seconds:0.00} s until an instance was ready", context.Request.Method, context.Request.Path, time.GetElapsedTime(started).TotalSeconds);
        }

        await next(context);
    }

    private bool HasDestinations() =>
        proxy.TryGetCluster(FrontDoorRoutes.ClusterId, out ClusterState? cluster) && cluster.DestinationsState.AvailableDestinations.Count > 0;

    private async Task RefuseAsync(HttpContext context)
    {
        string failure = pool.Snapshot().Where(i => i.State == InstanceState.Failed).Select(i => $"; {i.Id} failed: {i.Error}").FirstOrDefault() ?? "";
        string reason = string.Create(CultureInfo.InvariantCulture, $"No instance of '{options.AppName}' became ready within holdTimeout ({options.HoldTimeout.TotalSeconds:0.#} s){failure}");
        logger.LogWarning("503 for {Method} {Path}: {Reason}", context.Request.Method, context.Request.Path, reason);
        context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        context.Response.Headers.RetryAfter = "1";
        await context.Response.WriteAsync(reason, context.RequestAborted);
    }
}
