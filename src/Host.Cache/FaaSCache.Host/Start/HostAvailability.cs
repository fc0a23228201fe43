namespace FaaSCache.Host.Start;

/// <summary>The Functions host's <c>HostAvailabilityCheckMiddleware</c>: requests wait for a host that is still starting.</summary>
public static class HostAvailability
{
    /// <summary>
    /// A request on the HTTP port (<paramref name="httpPort"/>) that arrives before the host runs waits for it, at most
    /// <paramref name="timeout"/>, then gets 503 "Function host is not running." (at once, followed by the error, when the host failed);
    /// <c>/admin</c> (status, ping, readiness) and <c>/metrics</c> answer at once, as in the Functions host.
    /// </summary>
    public static IApplicationBuilder UseHostAvailability(this IApplicationBuilder app, HostLifecycle lifecycle, int httpPort, TimeSpan timeout)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(lifecycle);
        return app.Use(async (context, next) =>
        {
            if (lifecycle.State != HostState.Running && context.Connection.LocalPort == httpPort
                && !context.Request.Path.StartsWithSegments("/admin", StringComparison.OrdinalIgnoreCase)
                && !context.Request.Path.StartsWithSegments("/metrics", StringComparison.OrdinalIgnoreCase)
                && !await lifecycle.WaitAsync(timeout, context.RequestAborted).ConfigureAwait(false))
            {
                context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
                context.Response.ContentType = "text/plain; charset=utf-8";
                // The Functions host's words, then why when the host failed (a worker that cannot start, with its error).
                string body = lifecycle.Error is { } error ? $"{HostLifecycle.NotRunningMessage} {error}" : HostLifecycle.NotRunningMessage;
                await context.Response.WriteAsync(body, context.RequestAborted).ConfigureAwait(false);
                return;
            }

            await next(context).ConfigureAwait(false);
        });
    }
}
