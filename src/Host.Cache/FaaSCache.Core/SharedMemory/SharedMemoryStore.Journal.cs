namespace FaaSCache.SharedMemory;

/// <summary>
/// The journal (<c>&lt;dir&gt;/FaaSCache/&lt;instanceId&gt;.maps</c>): a '+' line is written before a map file can exist and a
/// '-' line after it is gone, so a later start-up deletes exactly the files a dead instance left. A '?' line names a map a
/// worker handed over (an output) before the host has taken it over or deleted it: swept the same way.
/// </summary>
public sealed partial class SharedMemoryStore
{
    private void Record(char op, string name)
    {
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            // A handed-over map ('?') that is taken over becomes one of this instance's own ('+'), journaled as such.
            bool wasHandedOver = op == '+' && _handedOver.Remove(name);
            bool changed = op == '+' ? _live.Add(name) | wasHandedOver : _live.Remove(name);
            if (changed)
            {
                WriteJournalLinesLocked(op, [name]);
            }
        }
    }

    /// <summary>Appends one line per name and flushes them in one write; the caller holds <c>_gate</c>.</summary>
    private void WriteJournalLinesLocked(char op, IEnumerable<string> names)
    {
        foreach (string name in names)
        {
            _journal.Write(op);
            _journal.Write(name);
            _journal.Write('\n');
            _journalLines++;
        }

        _journal.Flush();
        if (_journalLines > 4096 && _journalLines > 4 * (_live.Count + _pooledNames.Count + _kept.Count + _handedOver.Count))
        {
            CompactJournal();
        }
    }

    private StreamWriter OpenJournal()
    {
        var writer = new StreamWriter(new FileStream(JournalPath, new FileStreamOptions
        {
            Mode = FileMode.Create,
            Access = FileAccess.Write,
            Share = FileShare.Read,
            UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite,
        }));
        writer.Write(string.Create(CultureInfo.InvariantCulture, $"pid {Environment.ProcessId} {ProcessStartTicks(Environment.ProcessId)}\n"));

        // Pooled names stay journaled too: one may be linked into a map folder at any moment.
        foreach (string name in _live.Concat(_pooledNames).Concat(_kept.Select(k => k.Name)))
        {
            writer.Write('+');
            writer.Write(name);
            writer.Write('\n');
        }

        foreach (string name in _handedOver)
        {
            writer.Write('?');
            writer.Write(name);
            writer.Write('\n');
        }

        writer.Flush();
        _journalLines = _live.Count + _pooledNames.Count + _kept.Count + _handedOver.Count;
        return writer;
    }

    private void CompactJournal()
    {
        _journal.Dispose();
        _journal = OpenJournal();
    }

    /// <summary>Removes the maps listed by journals of this instance id or of processes that are gone.</summary>
    private int SweepStaleMaps()
    {
        int removed = 0;
        foreach (string journal in Directory.EnumerateFiles(JournalDirectory, "*.maps"))
        {
            string id = Path.GetFileNameWithoutExtension(journal);
            string[] lines;
            try
            {
                lines = File.ReadAllLines(journal);
            }
            catch (IOException)
            {
                continue;
            }

            if (!string.Equals(id, InstanceId, StringComparison.Ordinal) && OwnerIsAlive(lines))
            {
                continue;
            }

            // '+': the dead instance's own maps; '?': maps a worker handed it, deleted only when nobody holds them.
            var names = new Dictionary<string, bool>(StringComparer.Ordinal);
            foreach (string line in lines)
            {
                if (line.Length > 0 && line[0] is '+' or '?')
                {
                    if (IsBareFileName(line[1..]))
                    {
                        names[line[1..]] = line[0] == '+';
                    }
                    else
                    {
                        _logger.LogWarning(
                            "Ignored line '{Line}' of shared-memory journal {Journal}: a map name must be a bare file name (not empty, '.' or '..'; no '/', '\\' or NUL); nothing was deleted for it",
                            line.Replace("\0", "\\0", StringComparison.Ordinal), journal);
                    }
                }
                else if (line.Length > 1 && line[0] == '-')
                {
                    names.Remove(line[1..]);
                }
            }

            foreach ((string name, bool own) in names)
            {
                // A name may be a kept file now, in its folder's recycle folder.
                foreach (string path in MapDirectories.Append(SpillDirectory).Concat(MapDirectories.Select(RecycleFolder)).Select(d => InFolder(d, name)).Where(File.Exists))
                {
                    if (own || SharedMemoryMap.HeldByNobody(path, name))
                    {
                        SharedMemoryMap.TryDeleteFile(path);
                        removed++;
                    }
                }
            }

            SharedMemoryMap.TryDeleteFile(journal);
        }

        if (removed > 0)
        {
            _logger.LogInformation("Removed {Count} shared-memory map(s) left by an earlier run in {Directory}", removed, MapDirectory);
        }

        return removed;
    }

    /// <summary>True when <paramref name="name"/> names a file directly inside a folder, never one elsewhere.</summary>
    internal static bool IsBareFileName(string name) =>
        name.Length > 0 && name is not ("." or "..") && name.IndexOfAny(['/', '\\', '\0']) < 0;

    /// <summary><paramref name="name"/> (a bare file name) in <paramref name="folder"/>; throws if it would resolve anywhere else.</summary>
    private static string InFolder(string folder, string name)
    {
        string path = Path.GetFullPath(Path.Combine(folder, name));
        return string.Equals(Path.GetDirectoryName(path), Path.GetFullPath(folder).TrimEnd('/'), StringComparison.Ordinal)
            ? path
            : throw new SharedMemoryException($"Journal name '{name}' resolves to '{path}', outside shared-memory folder '{folder}'; nothing is deleted outside it.");
    }

    private static bool OwnerIsAlive(string[] lines)
    {
        if (lines.Length == 0)
        {
            return false;
        }

        string[] parts = lines[0].Split(' ');
        if (parts.Length < 3 || parts[0] != "pid" || !int.TryParse(parts[1], CultureInfo.InvariantCulture, out int pid))
        {
            return false;
        }

        string? started = ProcessStartTicks(pid);
        return started is not null && started == parts[2];
    }

    /// <summary>The process start time from /proc (guards against a reused pid); null when the process is gone.</summary>
    private static string? ProcessStartTicks(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            int close = stat.LastIndexOf(')');
            string[] fields = stat[(close + 2)..].Split(' ');
            return fields.Length > 19 ? fields[19] : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
