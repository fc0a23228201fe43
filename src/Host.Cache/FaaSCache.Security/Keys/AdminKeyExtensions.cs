using Microsoft.AspNetCore.Builder;

namespace FaaSCache.Security.Keys;

/// <summary>Admin routes behind the master key, as the Functions host has them.</summary>
public static class AdminKeyExtensions
{
    /// <summary>
    /// Requests whose path starts with one of <paramref name="prefixes"/> (<c>/admin</c>, <c>/metrics</c>, ...) need the
    /// master key, except the anonymous <paramref name="open"/> paths (<c>/admin/host/ping</c>, probes): 401 with no body
    /// without a valid key, 403 with a valid key of a lower level.
    /// </summary>
    public static IApplicationBuilder UseAdminKeys(this IApplicationBuilder app, KeyAuthorizer keys, IReadOnlyList<string> prefixes, IReadOnlyList<string> open)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(keys);
        return app.Use(next => context =>
        {
            PathString path = context.Request.Path;
            if (!keys.Enforced || !prefixes.Any(p => path.StartsWithSegments(p, StringComparison.OrdinalIgnoreCase))
                || open.Any(p => path.Equals(p, StringComparison.OrdinalIgnoreCase)))
            {
                return next(context);
            }

            KeyCheck check = keys.CheckAdmin(context.Request);
            if (check == KeyCheck.Allowed)
            {
                return next(context);
            }

            context.Response.StatusCode = check == KeyCheck.Forbidden ? StatusCodes.Status403Forbidden : StatusCodes.Status401Unauthorized;
            return Task.CompletedTask;
        });
    }
}
