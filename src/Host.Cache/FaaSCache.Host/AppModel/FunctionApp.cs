namespace FaaSCache.Host.AppModel;

/// <summary>
/// A loaded function app folder. Its functions come from function.json folders (known at load) or from the language
/// worker (worker indexing, known once the worker answered <c>FunctionsMetadataRequest</c>): <see cref="Functions"/> is
/// the list in force, and <see cref="Indexed"/> completes when it is final.
/// </summary>
public sealed class FunctionApp
{
    private readonly TaskCompletionSource<IReadOnlyList<FunctionDefinition>> _indexed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<Action<IReadOnlyList<FunctionDefinition>>> _publishers = [];
    private IReadOnlyList<FunctionDefinition> _functions = [];

    /// <summary>Gets the app folder (the script root).</summary>
    public required string RootDirectory { get; init; }

    /// <summary>Gets the app name: the folder name, or a C# build output's assembly name (<see cref="FunctionAppLoader.AppNameOf"/>).</summary>
    public string Name => FunctionAppLoader.AppNameOf(RootDirectory);

    /// <summary>Gets the app settings: local.settings.json's Values, overridden by the environment.</summary>
    public required IReadOnlyDictionary<string, string> Settings { get; init; }

    /// <summary>Gets the storage connection string (the <c>AzureWebJobsStorage</c> setting).</summary>
    public required string StorageConnection { get; init; }

    /// <summary>Gets the functions declared in function.json folders (the legacy models), whether or not they are in force.</summary>
    public required IReadOnlyList<FunctionDefinition> FolderFunctions { get; init; }

    /// <summary>Gets one line per function.json function left out (a binding type this host does not serve): the rest runs.</summary>
    public IReadOnlyList<string> FunctionErrors { get; init; } = [];

    /// <summary>Gets the workers, by language.</summary>
    public required IReadOnlyDictionary<string, WorkerDescription> Workers { get; init; }

    /// <summary>
    /// Gets the language whose worker indexes the functions (its worker.config.json says <c>workerIndexing</c>), or null
    /// when the function.json folders are all there is.
    /// </summary>
    public string? IndexingLanguage { get; init; }

    /// <summary>Gets the HTTP route prefix (host.json <c>extensions.http.routePrefix</c>, default <c>api</c>; empty for none).</summary>
    public string RoutePrefix { get; init; } = "api";

    /// <summary>Gets the functions in force: empty until indexing is done when a worker indexes them.</summary>
    public IReadOnlyList<FunctionDefinition> Functions => IndexingLanguage is null ? FolderFunctions : Volatile.Read(ref _functions);

    /// <summary>Gets a task that completes with the functions once they are final, or faults naming why there are none.</summary>
    public Task<IReadOnlyList<FunctionDefinition>> Indexed
    {
        get
        {
            if (IndexingLanguage is null)
            {
                _indexed.TrySetResult(FolderFunctions);
            }

            return _indexed.Task;
        }
    }

    /// <summary>Gets a value indicating whether the functions are final.</summary>
    public bool IsIndexed => Indexed.IsCompletedSuccessfully;

    /// <summary>
    /// Runs <paramref name="publish"/> with the final functions: now when they are known, else synchronously when the
    /// index completes, before anything learns of it (the worker is sent its loads after this, so the HTTP routes exist
    /// before the worker can be invoked).
    /// </summary>
    public void OnIndexed(Action<IReadOnlyList<FunctionDefinition>> publish)
    {
        lock (_publishers)
        {
            if (!Indexed.IsCompletedSuccessfully)
            {
                _publishers.Add(publish);
                return;
            }
        }

        publish(Indexed.Result);
    }

    /// <summary>Sets the functions the worker indexed (or the folders' ones, when it declined); false if already set.</summary>
    public bool CompleteIndex(IReadOnlyList<FunctionDefinition> functions)
    {
        lock (_publishers)
        {
            if (_indexed.Task.IsCompleted)
            {
                return false;
            }

            Volatile.Write(ref _functions, functions);
            foreach (Action<IReadOnlyList<FunctionDefinition>> publish in _publishers)
            {
                publish(functions);
            }

            _publishers.Clear();
            return _indexed.TrySetResult(functions);
        }
    }

    /// <summary>Indexing failed for good (no function could be found): start-up stops with <paramref name="message"/>.</summary>
    public void FailIndex(string message) => _indexed.TrySetException(new AppLoadException(message));
}
