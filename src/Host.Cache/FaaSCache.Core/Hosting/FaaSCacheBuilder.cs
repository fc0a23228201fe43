namespace FaaSCache.Hosting;

/// <summary>
/// What <see cref="FaaSCacheServiceCollectionExtensions.AddFaaSCache(IServiceCollection, IConfiguration)"/> returns:
/// components add themselves to the cachelet through it (<c>.AddMembership()</c>, <c>.AddPeers()</c>, and later the
/// voters and the Load and Memory Daemons), so every host wires them one way.
/// </summary>
public sealed class FaaSCacheBuilder
{
    internal FaaSCacheBuilder(IServiceCollection services, Func<IServiceProvider, IConfiguration> configuration)
    {
        Services = services;
        Configuration = configuration;
    }

    /// <summary>Gets the services.</summary>
    public IServiceCollection Services { get; }

    /// <summary>Gets the configuration the cachelet's settings come from (resolved with the container, not at registration).</summary>
    public Func<IServiceProvider, IConfiguration> Configuration { get; }
}
