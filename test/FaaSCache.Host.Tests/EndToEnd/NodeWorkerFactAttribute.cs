namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// A fact that needs the Node.js worker: skipped, saying why, only when its dependencies are not installed
/// (<c>src/Workers/node/node_modules</c> missing); otherwise it runs and must pass.
/// </summary>
public sealed class NodeWorkerFactAttribute : FactAttribute
{
    public NodeWorkerFactAttribute()
    {
        string modules = Path.Combine(RepositoryRoot.Find(), "src", "Workers", "node", "node_modules");
        if (!Directory.Exists(modules))
        {
            Skip = $"The Node.js worker's dependencies are not installed: '{modules}' is missing (run `npm ci` in src/Workers/node or scripts/setup.sh).";
        }
    }
}
