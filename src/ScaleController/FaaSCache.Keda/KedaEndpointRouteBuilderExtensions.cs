using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;

namespace FaaSCache.Keda;

/// <summary>Maps the KEDA face: <c>externalscaler.ExternalScaler</c> on the endpoint's HTTP/2 listener(s).</summary>
public static class KedaEndpointRouteBuilderExtensions
{
    /// <summary>Maps <see cref="KedaExternalScalerService"/>; KEDA reaches it at the ScaledObject's <c>scalerAddress</c> (plain HTTP/2 unless TLS is configured).</summary>
    public static GrpcServiceEndpointConventionBuilder MapFaaSCacheKeda(this IEndpointRouteBuilder endpoints) =>
        endpoints.MapGrpcService<KedaExternalScalerService>();
}
