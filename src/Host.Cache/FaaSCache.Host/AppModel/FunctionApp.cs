namespace FaaSCache.Host.AppModel;

/// <summary>A loaded function app folder.</summary>
public sealed class FunctionApp
{
    /// <summary>Gets the app folder (the script root).</summary>
    public required string RootDirectory { get; init; }

    /// <summary>Gets the app name (the folder name).</summary>
    public string Name => Path.GetFileName(RootDirectory.TrimEnd('/'));

    /// <summary>Gets the app settings: local.settings.json's Values, overridden by the environment.</summary>
    public required IReadOnlyDictionary<string, string> Settings { get; init; }

    /// <summary>Gets the storage connection string (the <c>AzureWebJobsStorage</c> setting).</summary>
    public required string StorageConnection { get; init; }

    /// <summary>Gets the functions.</summary>
    public required IReadOnlyList<FunctionDefinition> Functions { get; init; }

    /// <summary>Gets the workers, by language.</summary>
    public required IReadOnlyDictionary<string, WorkerDescription> Workers { get; init; }
}
