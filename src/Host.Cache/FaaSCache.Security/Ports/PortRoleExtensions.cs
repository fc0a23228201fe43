using Microsoft.AspNetCore.Builder;

namespace FaaSCache.Security.Ports;

/// <summary>Each port carries its own services only: endpoints declare their role, a middleware enforces it.</summary>
public static class PortRoleExtensions
{
    /// <summary>Serves the endpoints of <paramref name="builder"/> only on the port of <paramref name="role"/>.</summary>
    public static TBuilder ServedOn<TBuilder>(this TBuilder builder, ListenerRole role)
        where TBuilder : IEndpointConventionBuilder
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(role);
        builder.Add(endpoint => endpoint.Metadata.Add(new ServedOnMetadata(role)));
        return builder;
    }

    /// <summary>
    /// After routing: an endpoint matched on a connection whose local port carries another role is un-matched, so the
    /// request ends as any unknown path does (404), whatever its Host header says. Endpoints that declare no role are
    /// the HTTP port's.
    /// </summary>
    public static IApplicationBuilder UsePortRoles(this IApplicationBuilder app, PortRoles roles)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(roles);
        return app.Use(next => context =>
        {
            if (context.GetEndpoint() is { } endpoint)
            {
                ListenerRole wanted = endpoint.Metadata.GetMetadata<ServedOnMetadata>()?.Role ?? ListenerRole.Http;
                if (roles.For(context.Connection.LocalPort) != wanted)
                {
                    context.SetEndpoint(null);
                    context.Request.RouteValues.Clear();
                }
            }

            return next(context);
        });
    }
}
