namespace FaaSCache.Host.AppModel;

/// <summary>What a worker's <c>FunctionMetadataResponse</c> gave: the functions in force, and what was dropped and why.</summary>
/// <param name="Functions">The functions to register (the function.json folders' when the worker declined).</param>
/// <param name="UsedFolders">True when the worker declined (<c>use_default_metadata_indexing</c>) and the folders count.</param>
/// <param name="Errors">One line per function the host dropped, and the worker's own failure if it reported one.</param>
public sealed record WorkerIndexResult(IReadOnlyList<FunctionDefinition> Functions, bool UsedFolders, IReadOnlyList<string> Errors);

/// <summary>
/// Worker indexing on the host's side, as the Functions host does it (WorkerFunctionMetadataProvider): each
/// <c>RpcFunctionMetadata</c> becomes a function with the worker's id, name, directory, script and entry point, its raw
/// bindings parsed like function.json's (same binding layer, so the cache, the presets and the triggers behave the same),
/// its properties and retry options kept for the load request. A function that fails validation is dropped, alone.
/// </summary>
public static partial class WorkerIndex
{
    /// <summary>Turns the worker's answer into the app's functions.</summary>
    public static WorkerIndexResult FromResponse(FunctionApp app, string language, FunctionMetadataResponse response)
    {
        var errors = new List<string>();
        if (response.Result?.Status == StatusResult.Types.Status.Failure)
        {
            errors.Add($"the {language} worker failed to index functions: {Describe(response.Result)}");
        }

        if (response.UseDefaultMetadataIndexing)
        {
            // The folders count: the functions left out of them (a binding this host does not serve) are said too.
            return new WorkerIndexResult(app.FolderFunctions, true, [.. errors, .. app.FunctionErrors]);
        }

        var functions = new List<FunctionDefinition>();
        foreach (RpcFunctionMetadata metadata in response.FunctionMetadataResults)
        {
            string source = $"Function '{metadata.Name}' (indexed by the {language} worker)";
            try
            {
                FunctionDefinition function = FromMetadata(source, app, language, metadata);
                if (functions.Any(f => string.Equals(f.Name, function.Name, StringComparison.OrdinalIgnoreCase)))
                {
                    throw new AppLoadException($"{source}: another function has the same name.");
                }

                functions.Add(function);
            }
            catch (AppLoadException e)
            {
                errors.Add(e.Message);
            }
        }

        return new WorkerIndexResult([.. functions.OrderBy(f => f.Name, StringComparer.Ordinal)], false, errors);
    }

    private static FunctionDefinition FromMetadata(string source, FunctionApp app, string language, RpcFunctionMetadata metadata)
    {
        if (!FunctionName().IsMatch(metadata.Name) || string.Equals(metadata.Name, "host", StringComparison.OrdinalIgnoreCase))
        {
            throw new AppLoadException($"{source}: the name must start with a letter and use up to 128 letters, digits, '_' or '-' (and not be 'host').");
        }

        if (string.IsNullOrEmpty(metadata.ScriptFile))
        {
            throw new AppLoadException($"{source} has no script_file.");
        }

        var bindings = new List<BindingDefinition>();
        for (int i = 0; i < metadata.RawBindings.Count; i++)
        {
            bindings.Add(BindingParser.Parse(source, i, BindingParser.ParseObject($"{source}: raw binding {i}", metadata.RawBindings[i]), app.Settings));
        }

        if (!bindings.Any(b => b.Direction == BindingDirection.In))
        {
            throw new AppLoadException($"{source}: a function needs at least one binding of direction 'in' (its trigger).");
        }

        BindingParser.CheckFunction(source, bindings);
        return new FunctionDefinition
        {
            Name = metadata.Name,
            Directory = metadata.Directory is { Length: > 0 } dir ? dir : app.RootDirectory,
            ScriptFile = metadata.ScriptFile,
            EntryPoint = metadata.EntryPoint,
            Language = language,
            Bindings = bindings,
            FunctionId = metadata.FunctionId is { Length: > 0 } id ? id : Guid.NewGuid().ToString(),
            WorkerIndexed = true,
            Properties = new Dictionary<string, string>(metadata.Properties),
            RetryOptions = metadata.RetryOptions,
            IndexingError = metadata.Status?.Status == StatusResult.Types.Status.Failure ? Describe(metadata.Status) : null,
        };
    }

    private static string Describe(StatusResult result)
        => result.Exception is { } e && !string.IsNullOrEmpty(e.Message) ? e.Message : result.Result is { Length: > 0 } r ? r : "no reason given";

    [GeneratedRegex("^[a-z][a-z0-9_\\-]{0,127}$", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant)]
    private static partial Regex FunctionName();
}
