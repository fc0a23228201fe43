namespace FaaSCache.Testing;

/// <summary>
/// A freshly created, uniquely named directory that is deleted recursively on dispose and, failing
/// that, when the test process exits.
/// </summary>
internal sealed class OwnedDirectory : IDisposable
{
    private readonly IDisposable _exitRegistration;
    private int _disposed;

    public OwnedDirectory(string parent, string prefix)
    {
        if (!Directory.Exists(parent))
        {
            throw new DirectoryNotFoundException($"Cannot create a temporary directory: '{parent}' does not exist.");
        }

        Path = System.IO.Path.Combine(parent, $"{prefix}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(Path);
        var path = Path;
        _exitRegistration = ProcessExitCleanup.Register(() => DeleteQuietly(path));
    }

    public string Path { get; }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _exitRegistration.Dispose();
        Delete(Path);
    }

    private static void Delete(string path)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                if (Directory.Exists(path))
                {
                    Directory.Delete(path, recursive: true);
                }

                return;
            }
            catch (Exception e) when (attempt < 5 && e is IOException or UnauthorizedAccessException)
            {
                // A just-killed server may still be closing files; try again shortly.
                Thread.Sleep(100 * attempt);
            }
        }
    }

    private static void DeleteQuietly(string path)
    {
        try
        {
            Delete(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Best effort at process exit.
        }
    }
}
