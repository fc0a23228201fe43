namespace FaaSCache.Host.Tests;

/// <summary>Copies of app and worker folders that a test runs from a place of its own (and may change there).</summary>
internal static class Folders
{
    /// <summary>
    /// Copies folder <paramref name="from"/> into <paramref name="to"/> (created if missing) as an app is deployed: links
    /// followed (amber-alert-v2's shared_code is one), the folders named in <paramref name="skip"/> (caches, build output,
    /// dependencies installed elsewhere) left out.
    /// </summary>
    public static void Copy(string from, string to, params string[] skip)
    {
        Directory.CreateDirectory(to);
        foreach (string file in Directory.GetFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)), overwrite: true);
        }

        foreach (string directory in Directory.GetDirectories(from).Where(d => !skip.Contains(Path.GetFileName(d))))
        {
            Copy(directory, Path.Combine(to, Path.GetFileName(directory)), skip);
        }
    }
}
