using Microsoft.Extensions.DependencyInjection;

namespace FaaSCache.Keda;

/// <summary>Adds the KEDA face's services; the host registers its <see cref="IScaleDecisions"/> (one per app) itself.</summary>
public static class KedaServiceCollectionExtensions
{
    /// <summary>Adds gRPC (idempotent) for <see cref="KedaExternalScalerService"/>; map it with <see cref="KedaEndpointRouteBuilderExtensions.MapFaaSCacheKeda"/>.</summary>
    public static IServiceCollection AddFaaSCacheKeda(this IServiceCollection services)
    {
        services.AddGrpc();
        return services;
    }
}
