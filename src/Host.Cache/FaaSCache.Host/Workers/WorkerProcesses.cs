namespace FaaSCache.Host.Workers;

/// <summary>The language workers' current process ids, for the Memory Daemon (§3.4: their RSS is function memory).</summary>
public sealed class WorkerProcesses(IReadOnlyDictionary<string, LanguageWorkerManager> workers) : IWorkerProcesses
{
    /// <inheritdoc />
    public IReadOnlyList<int> ProcessIds => [.. workers.Values.Select(w => w.ProcessId).Where(pid => pid > 0)];
}
