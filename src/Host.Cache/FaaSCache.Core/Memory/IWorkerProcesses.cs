namespace FaaSCache.Memory;

/// <summary>The language worker processes whose memory counts as the functions' own (§3.4); the FaaSCache host implements it.</summary>
public interface IWorkerProcesses
{
    /// <summary>The ids of the worker processes running now.</summary>
    IReadOnlyList<int> ProcessIds { get; }
}
