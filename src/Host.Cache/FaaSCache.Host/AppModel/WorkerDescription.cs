namespace FaaSCache.Host.AppModel;

/// <summary>A language worker's <c>worker.config.json</c> (<c>description</c> section).</summary>
public sealed class WorkerDescription
{
    /// <summary>Gets the language (<c>python</c>, <c>node</c>, <c>dotnet-isolated</c>).</summary>
    public required string Language { get; init; }

    /// <summary>Gets the folder holding worker.config.json.</summary>
    public required string WorkerDirectory { get; init; }

    /// <summary>Gets the script extensions the worker runs.</summary>
    public required IReadOnlyList<string> Extensions { get; init; }

    /// <summary>Gets the executable (interpreter).</summary>
    public required string DefaultExecutablePath { get; init; }

    /// <summary>Gets the worker script, resolved against <see cref="WorkerDirectory"/>.</summary>
    public required string DefaultWorkerPath { get; init; }

    /// <summary>Gets the arguments placed before the worker script.</summary>
    public IReadOnlyList<string> Arguments { get; init; } = [];

    /// <summary>Gets the arguments placed after the worker script.</summary>
    public IReadOnlyList<string> WorkerArguments { get; init; } = [];

    /// <summary>Gets a value indicating whether the worker indexes the app's functions itself (<c>"workerIndexing": "true"</c>).</summary>
    public bool WorkerIndexing { get; init; }
}
