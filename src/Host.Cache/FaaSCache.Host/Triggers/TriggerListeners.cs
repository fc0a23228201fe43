namespace FaaSCache.Host.Triggers;

/// <summary>When the trigger services start listening: as the Functions host starts its listeners.</summary>
internal static class TriggerListeners
{
    /// <summary>
    /// The app's functions once they are indexed and the host runs (every worker loaded; a worker-indexed app's functions
    /// are known only then), or null when the host stops first or the app did not load.
    /// </summary>
    public static async Task<IReadOnlyList<FunctionDefinition>?> FunctionsWhenRunningAsync(FunctionApp app, Start.HostLifecycle? lifecycle, CancellationToken stopping)
    {
        try
        {
            IReadOnlyList<FunctionDefinition> functions = await app.Indexed.WaitAsync(stopping).ConfigureAwait(false);
            if (lifecycle is not null)
            {
                await lifecycle.Ready.WaitAsync(stopping).ConfigureAwait(false);
            }

            return functions;
        }
        catch (Exception e) when (e is OperationCanceledException or AppLoadException or InvalidOperationException)
        {
            return null;
        }
    }
}
