namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>A small tmpfs the test mounts itself (root), like a container's 64 MB /dev/shm; unmounted and removed on dispose.</summary>
internal sealed class TmpfsMount : IDisposable
{
    public TmpfsMount(int megabytes, bool readOnly = false)
    {
        Path = Directory.CreateTempSubdirectory("faascache-tmpfs-").FullName;
        try
        {
            string options = string.Create(CultureInfo.InvariantCulture, $"size={megabytes}m{(readOnly ? ",ro" : string.Empty)}");
            Run("mount", "-t", "tmpfs", "-o", options, "tmpfs", Path);
        }
        catch
        {
            Directory.Delete(Path);
            throw;
        }
    }

    public string Path { get; }

    public string MapDirectory => System.IO.Path.Combine(Path, "AzureFunctions");

    public void Dispose()
    {
        try
        {
            Run("umount", "-l", Path);
        }
        finally
        {
            Directory.Delete(Path, recursive: true);
        }
    }

    private static void Run(string file, params string[] args)
    {
        var start = new ProcessStartInfo(file) { RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (string a in args)
        {
            start.ArgumentList.Add(a);
        }

        using Process p = Process.Start(start)!;
        string error = p.StandardError.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0)
        {
            throw new InvalidOperationException($"{file} {string.Join(' ', args)} failed ({p.ExitCode}): {error}");
        }
    }
}
