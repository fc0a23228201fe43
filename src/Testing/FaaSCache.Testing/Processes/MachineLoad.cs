namespace FaaSCache.Testing;

/// <summary>How busy the machine is, printed beside every measurement (the machines are shared: a number means little without it).</summary>
public static class MachineLoad
{
    /// <summary>The 1, 5 and 15 minute load averages (/proc/loadavg), or "?" where there is none.</summary>
    public static string Average()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "?";
        }
    }
}
