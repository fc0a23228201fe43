using FaaSCache.Caching;
using FaaSCache.Options;
using Microsoft.Azure.WebJobs.Description;
using Microsoft.Azure.WebJobs.Host.Config;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.WebJobs;

/// <summary>
/// The FaaSCache WebJobs extension: its section is <c>extensions:faasCache</c> (host.json's <c>extensions.faasCache</c>).
/// The cache itself is the host's <see cref="Microsoft.Azure.WebJobs.IFunctionDataCache"/>; at start-up this
/// provider prints what is in force (instance, storage endpoint, shared memory, effective options).
/// </summary>
[Extension(ExtensionName, FaaSCacheOptions.SectionName)]
public sealed class FaaSCacheExtensionConfigProvider : IExtensionConfigProvider
{
    /// <summary>The extension's name.</summary>
    public const string ExtensionName = "FaaSCache";

    private readonly ICacheAdmin _cachelet;
    private readonly string _sectionPath;
    private readonly ILogger _logger;

    /// <summary>Initializes a new instance of the <see cref="FaaSCacheExtensionConfigProvider"/> class.</summary>
    /// <param name="cachelet">This host instance's cachelet.</param>
    /// <param name="configuration">The host's configuration, to name the section the options came from.</param>
    /// <param name="logger">Logger.</param>
    public FaaSCacheExtensionConfigProvider(ICacheAdmin cachelet, IConfiguration? configuration = null, ILogger<FaaSCacheExtensionConfigProvider>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(cachelet);
        _cachelet = cachelet;
        _sectionPath = configuration?.GetWebJobsExtensionConfigurationSectionPath(FaaSCacheOptions.SectionName) ?? "extensions:" + FaaSCacheOptions.SectionName;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    /// <inheritdoc />
    public void Initialize(ExtensionConfigContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _logger.LogInformation(
            "FaaSCache extension initialized: instance {InstanceId}, storage endpoint {StorageEndpoint}, shared memory {MapDirectory}, " +
            "capacity {CapacityBytes} bytes. Effective options ({Section}):{NewLine}{Options}",
            _cachelet.InstanceId,
            _cachelet.Storage.AccountUri,
            _cachelet.SharedMemory.MapDirectory,
            _cachelet.CapacityBytes,
            _sectionPath,
            Environment.NewLine,
            FaaSCacheOptionsFormatter.Format(_cachelet.Options));
    }
}
