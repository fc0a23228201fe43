using FaaSCache.NetworkEmulation;

namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// With <see cref="ScaleControllerOptions.NetworkNamespaces"/>: refuses to start where shaped links cannot be made (says
/// why), removes what a killed run left with the prefix at start, and removes anything still left after the instances
/// stopped (registered before the pool's lifetime, so it stops after it).
/// </summary>
public sealed class NamespaceHousekeeping(ScaleControllerOptions options, ILogger<NamespaceHousekeeping> logger) : IHostedService
{
    /// <inheritdoc />
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        if (!NetworkNamespace.IsSupported(out string why))
        {
            throw new InvalidOperationException("Instances cannot run in network namespaces here: " + why);
        }

        await NetworkNamespace.CleanupAsync(options.NamespacePrefix);
    }

    /// <inheritdoc />
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        try
        {
            await NetworkNamespace.CleanupAsync(options.NamespacePrefix);
        }
        catch (Exception e)
        {
            logger.LogError("Could not remove every namespace with prefix {Prefix}: {Error}", options.NamespacePrefix, e.Message);
        }
    }
}
