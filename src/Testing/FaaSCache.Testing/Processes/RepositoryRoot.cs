namespace FaaSCache.Testing;

/// <summary>Locates the repository root: the folder that holds FaaSCache.sln.</summary>
public static class RepositoryRoot
{
    public const string SolutionFileName = "FaaSCache.sln";

    /// <summary>Walks up from <see cref="AppContext.BaseDirectory"/> to the folder holding FaaSCache.sln.</summary>
    public static string Find()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, SolutionFileName)))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException(
            $"Could not find the repository root: no folder above '{AppContext.BaseDirectory}' holds {SolutionFileName}.");
    }
}
