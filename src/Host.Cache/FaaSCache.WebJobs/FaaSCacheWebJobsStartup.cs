using FaaSCache.WebJobs;
using Microsoft.Azure.WebJobs.Hosting;

[assembly: WebJobsStartup(typeof(FaaSCacheWebJobsStartup), FaaSCacheExtensionConfigProvider.ExtensionName)]

namespace FaaSCache.WebJobs;

/// <summary>Lets a WebJobs / Functions host that loads startup types (extensions.json) add FaaSCache with no code.</summary>
public sealed class FaaSCacheWebJobsStartup : IWebJobsStartup
{
    /// <inheritdoc />
    public void Configure(IWebJobsBuilder builder) => builder.AddFaaSCache();
}
