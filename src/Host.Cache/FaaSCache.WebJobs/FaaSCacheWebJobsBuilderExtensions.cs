using System.Globalization;
using System.Text;
using FaaSCache.Caching;
using FaaSCache.Ownership;
using FaaSCache.Options;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.Azure.WebJobs;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace FaaSCache.WebJobs;

/// <summary>Adds FaaSCache to a WebJobs / Functions host: the cachelet becomes the host's <see cref="IFunctionDataCache"/>.</summary>
public static class FaaSCacheWebJobsBuilderExtensions
{
    /// <summary>Configuration key of an explicit instance id (wins over <see cref="WebsiteInstanceIdSetting"/>).</summary>
    public const string InstanceIdSetting = "FaaSCache:InstanceId";

    /// <summary>The App Service instance id, used when <see cref="InstanceIdSetting"/> is not set.</summary>
    public const string WebsiteInstanceIdSetting = "WEBSITE_INSTANCE_ID";

    /// <summary>The app's storage connection, looked up as WebJobs does (<c>ConnectionStrings:AzureWebJobsStorage</c>, then <c>AzureWebJobsStorage</c>).</summary>
    public const string StorageSetting = "AzureWebJobsStorage";

    /// <summary>
    /// Registers the FaaSCache extension. Options come from the host's <c>extensions:faasCache</c> section, under
    /// the WebJobs root (<c>AzureWebJobs:extensions:faasCache</c>, or <c>AzureFunctionsJobHost:extensions:faasCache</c>
    /// in the Functions host, which sets <c>AzureWebJobsConfigurationSection</c>); an invalid value stops start-up with a
    /// <see cref="FaaSCacheConfigurationException"/> naming the key. <paramref name="configure"/> runs after the section is read.
    /// Every piece is registered with TryAdd, so a registration made before this call wins.
    /// </summary>
    /// <param name="builder">The WebJobs builder.</param>
    /// <param name="configure">Optional changes to the options read from configuration (validated afterwards).</param>
    /// <returns>The builder.</returns>
    public static IWebJobsBuilder AddFaaSCache(this IWebJobsBuilder builder, Action<FaaSCacheOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.AddExtension<FaaSCacheExtensionConfigProvider>();

        IServiceCollection services = builder.Services;
        if (configure is not null)
        {
            services.Configure(configure);
        }

        services.TryAddSingleton(ReadOptions);
        services.TryAddSingleton<IOptions<FaaSCacheOptions>>(sp => Microsoft.Extensions.Options.Options.Create(sp.GetRequiredService<FaaSCacheOptions>()));
        services.TryAddSingleton(CreateSharedMemoryStore);
        services.TryAddSingleton(CreateBlobStore);
        services.TryAddSingleton(CreateCachelet);
        services.TryAddSingleton<IFunctionDataCache, FaaSCacheFunctionDataCache>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, FaaSCacheLifetime>());
        return builder;
    }

    private static FaaSCacheOptions ReadOptions(IServiceProvider services)
    {
        IConfiguration configuration = services.GetRequiredService<IConfiguration>();
        IConfigurationSection section = configuration.GetWebJobsExtensionConfigurationSection(FaaSCacheOptions.SectionName);
        FaaSCacheOptions options = FaaSCacheOptionsReader.Read(section);
        foreach (IConfigureOptions<FaaSCacheOptions> change in services.GetServices<IConfigureOptions<FaaSCacheOptions>>())
        {
            change.Configure(options);
        }

        // Code may have changed what the section said: the same ranges apply.
        ValidateOptionsResult result = new FaaSCacheOptionsValidator().Validate(Microsoft.Extensions.Options.Options.DefaultName, options);
        return result.Failed ? throw new FaaSCacheConfigurationException(result.FailureMessage) : options;
    }

    private static SharedMemoryStore CreateSharedMemoryStore(IServiceProvider services)
    {
        IConfiguration configuration = services.GetRequiredService<IConfiguration>();
        string? directories = Setting(configuration, SharedMemoryStore.DirectoriesSetting);
        IReadOnlyList<string>? roots = directories?.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        return new SharedMemoryStore(
            ResolveInstanceId(configuration),
            roots is { Count: > 0 } ? roots : null,
            services.GetService<ILoggerFactory>()?.CreateLogger<SharedMemoryStore>());
    }

    private static IBlobStore CreateBlobStore(IServiceProvider services)
    {
        IConfiguration configuration = services.GetRequiredService<IConfiguration>();
        string? connection = configuration.GetWebJobsConnectionString(StorageSetting);
        if (string.IsNullOrWhiteSpace(connection))
        {
            bool identityBased = configuration.GetSection(StorageSetting).GetChildren().Any();
            throw new FaaSCacheConfigurationException(
                $"FaaSCache needs the app's storage account: set the app setting '{StorageSetting}' (or the connection string " +
                $"'ConnectionStrings:{StorageSetting}') to a storage connection string, e.g. 'UseDevelopmentStorage=true' for Azurite." +
                (identityBased ? $" '{StorageSetting}' is an identity-based connection (a section), which FaaSCache does not support yet." : string.Empty));
        }

        try
        {
            return AzureBlobStore.FromConnectionString(connection);
        }
        catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException)
        {
            // The value holds the account key: name the setting, never echo it.
            throw new FaaSCacheConfigurationException($"The storage connection string in '{StorageSetting}' is not valid: {e.GetType().Name}.", e);
        }
    }

    private static Cachelet CreateCachelet(IServiceProvider services) => new(
        services.GetRequiredService<FaaSCacheOptions>(),
        services.GetRequiredService<IBlobStore>(),
        services.GetRequiredService<SharedMemoryStore>(),
        services.GetService<IOwnerLocator>(),
        services.GetService<TimeProvider>(),
        services.GetService<ILogger<Cachelet>>(),
        ownsSharedMemory: false); // the container owns the store, which users may replace or share

    /// <summary><see cref="InstanceIdSetting"/>, else <see cref="WebsiteInstanceIdSetting"/>, else <c>&lt;machine&gt;-&lt;pid&gt;</c>.</summary>
    private static string ResolveInstanceId(IConfiguration configuration)
    {
        if (configuration[InstanceIdSetting] is { } configured)
        {
            return IsValidInstanceId(configured)
                ? configured
                : throw new FaaSCacheConfigurationException(InstanceIdSetting, configured, "allowed values are non-empty names of letters, digits, '-', '_' and '.'");
        }

        string? website = Setting(configuration, WebsiteInstanceIdSetting);
        return Sanitize(website ?? string.Create(CultureInfo.InvariantCulture, $"{Environment.MachineName}-{Environment.ProcessId}"));
    }

    /// <summary>A setting from configuration (app settings), else from the environment (a bare HostBuilder reads no environment variables).</summary>
    private static string? Setting(IConfiguration configuration, string name)
    {
        string? value = configuration[name];
        if (string.IsNullOrWhiteSpace(value))
        {
            value = Environment.GetEnvironmentVariable(name);
        }

        return string.IsNullOrWhiteSpace(value) ? null : value.Trim();
    }

    private static bool IsValidInstanceId(string id) =>
        !string.IsNullOrWhiteSpace(id) && id.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.');

    private static string Sanitize(string id)
    {
        var clean = new StringBuilder(id.Length);
        foreach (char c in id)
        {
            clean.Append(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' ? c : '-');
        }

        return clean.Length == 0 ? "faascache" : clean.ToString();
    }
}
