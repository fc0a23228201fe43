namespace FaaSCache.Memory;

/// <summary>Where a memory limit came from.</summary>
public enum MemoryLimitSource
{
    /// <summary>host.json <c>memoryLimitBytes</c>.</summary>
    Configured,

    /// <summary>The host process's cgroup v2 <c>memory.max</c>.</summary>
    Cgroup,

    /// <summary>The machine's MemTotal from /proc/meminfo.</summary>
    Machine,
}

/// <summary>A process's resident memory from /proc/&lt;pid&gt;/status, split into private and shared-memory pages.</summary>
/// <param name="ResidentBytes">VmRSS.</param>
/// <param name="SharedMemoryBytes">RssShmem: resident tmpfs/shm pages (cached objects the process mapped).</param>
public readonly record struct ProcessMemory(long ResidentBytes, long SharedMemoryBytes)
{
    /// <summary>Gets the resident bytes that are the process's own (VmRSS minus RssShmem): cached objects are counted once, as cached bytes.</summary>
    public long PrivateBytes => Math.Max(0, ResidentBytes - SharedMemoryBytes);
}

/// <summary>
/// The Memory Daemon's one source of measurements (§3.4): process RSS, the cgroup v2 limit and the machine's memory,
/// read from /proc and /sys/fs/cgroup (roots are parameters so tests read fixture files).
/// </summary>
public sealed class ProcMemoryReader
{
    private readonly string _procRoot;
    private readonly string _cgroupRoot;

    /// <summary>Initializes a new instance of the <see cref="ProcMemoryReader"/> class.</summary>
    /// <param name="procRoot">The proc file system (default /proc).</param>
    /// <param name="cgroupRoot">The cgroup v2 mount (default /sys/fs/cgroup).</param>
    public ProcMemoryReader(string procRoot = "/proc", string cgroupRoot = "/sys/fs/cgroup")
    {
        _procRoot = procRoot;
        _cgroupRoot = cgroupRoot;
    }

    /// <summary>The resident memory of <paramref name="pid"/>, or null when the process is gone.</summary>
    public ProcessMemory? ReadProcess(int pid)
    {
        string[] lines;
        try
        {
            lines = File.ReadAllLines(Path.Combine(_procRoot, pid.ToString(CultureInfo.InvariantCulture), "status"));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        long? rss = KilobyteField(lines, "VmRSS:");
        return rss is null ? null : new ProcessMemory(rss.Value, KilobyteField(lines, "RssShmem:") ?? 0);
    }

    /// <summary>The <c>memory.max</c> of the cgroup v2 group of <paramref name="pid"/> ("self" by default); null when unlimited ("max") or unknown.</summary>
    public long? ReadCgroupLimit(string pid = "self")
    {
        string? group = CgroupPath(pid);
        if (group is null)
        {
            return null;
        }

        string file = Path.Combine(_cgroupRoot, group.TrimStart('/'), "memory.max");
        try
        {
            string text = File.ReadAllText(file).Trim();
            return long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out long limit) ? limit : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>The machine's MemTotal in bytes.</summary>
    public long ReadMachineTotal()
    {
        string[] lines = File.ReadAllLines(Path.Combine(_procRoot, "meminfo"));
        return KilobyteField(lines, "MemTotal:") ?? throw new InvalidDataException($"No MemTotal line in {Path.Combine(_procRoot, "meminfo")}.");
    }

    /// <summary>The limit in force: the configured one, else the cgroup's, else the machine's.</summary>
    public (long Bytes, MemoryLimitSource Source) ResolveLimit(long? configured)
    {
        if (configured is { } bytes)
        {
            return (bytes, MemoryLimitSource.Configured);
        }

        return ReadCgroupLimit() is { } cgroup ? (cgroup, MemoryLimitSource.Cgroup) : (ReadMachineTotal(), MemoryLimitSource.Machine);
    }

    /// <summary>The group path of the cgroup v2 line ("0::/path") in /proc/&lt;pid&gt;/cgroup.</summary>
    private string? CgroupPath(string pid)
    {
        try
        {
            foreach (string line in File.ReadAllLines(Path.Combine(_procRoot, pid, "cgroup")))
            {
                if (line.StartsWith("0::", StringComparison.Ordinal))
                {
                    return line[3..];
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return null;
    }

    /// <summary>A "Name:   1234 kB" field in bytes.</summary>
    private static long? KilobyteField(string[] lines, string name)
    {
        foreach (string line in lines)
        {
            if (!line.StartsWith(name, StringComparison.Ordinal))
            {
                continue;
            }

            string[] parts = line[name.Length..].Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length >= 1 && long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long value))
            {
                long unit = parts.Length >= 2 && string.Equals(parts[1], "kB", StringComparison.Ordinal) ? 1024 : 1;
                return value * unit;
            }
        }

        return null;
    }
}
