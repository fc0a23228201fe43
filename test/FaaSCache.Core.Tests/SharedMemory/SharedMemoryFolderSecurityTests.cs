namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>
/// Issue 31, row 7, tried as an attacker would: another local user makes the store's map, journal or recycle folder before
/// the host's first start (world-writable, owned by them, or a symlink), with a journal naming files outside it. Start-up
/// is refused naming the folder, its owner and mode, and nothing is deleted; journal lines that are not bare file names
/// are ignored and logged; folders the store makes are 0700, and an existing 0755 one of ours still serves.
/// </summary>
[Trait("Category", "Unit")]
public sealed class SharedMemoryFolderSecurityTests : IDisposable
{
    private const UnixFileMode Private = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode Shared = Private | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute;
    private readonly TempShmDirectory _root = new();
    private readonly DirectoryInfo _elsewhere = Directory.CreateTempSubdirectory("faascache-victims-");

    public static TheoryData<string> Folders => ["AzureFunctions", "FaaSCache", "AzureFunctions/.recycled"];

    [Fact]
    public void A_fresh_root_gets_its_folders_made_owner_only_and_serves()
    {
        using var store = new SharedMemoryStore("fresh", [_root.Path]);
        using SharedMemoryMap map = store.Create(3);

        Assert.Equal(Private, File.GetUnixFileMode(store.MapDirectory));
        Assert.Equal(Private, File.GetUnixFileMode(store.JournalDirectory));
        Assert.True(File.Exists(map.FilePath));
    }

    [Fact]
    public void Existing_0755_folders_of_this_user_are_used_as_they_are()
    {
        foreach (string folder in (string[])["AzureFunctions", "FaaSCache", "AzureFunctions/.recycled"])
        {
            Directory.CreateDirectory(Path.Combine(_root.Path, folder), Shared);
            File.SetUnixFileMode(Path.Combine(_root.Path, folder), Shared); // whatever the umask made of it
        }

        using var store = new SharedMemoryStore("existing", [_root.Path]);
        using SharedMemoryMap map = store.Create(3);

        Assert.Equal(Shared, File.GetUnixFileMode(store.MapDirectory));
        Assert.True(File.Exists(map.FilePath));
    }

    [Theory]
    [MemberData(nameof(Folders))]
    public void A_folder_writable_by_group_or_others_is_refused_naming_its_owner_and_mode(string folder)
    {
        string path = MakeFolder(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute);

        var e = Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("open", [_root.Path]));

        Assert.Contains($"Shared-memory folder '{path}' is writable by group or others", e.Message, StringComparison.Ordinal);
        Assert.Contains($"(owner uid {PrivateFolder.EffectiveUserId}, mode 0777)", e.Message, StringComparison.Ordinal);
        Assert.Contains($"Remove it (rm -r '{path}') or fix it", e.Message, StringComparison.Ordinal);
    }

    [RootFact]
    public void A_folder_owned_by_another_user_is_refused_naming_the_owner()
    {
        foreach (string folder in (string[])["AzureFunctions", "FaaSCache", "AzureFunctions/.recycled"])
        {
            using var root = new TempShmDirectory();
            string path = Path.Combine(root.Path, folder);
            Directory.CreateDirectory(path, Private);
            Chown("65534", path);

            var e = Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("theirs", [root.Path]));

            Assert.Contains($"Shared-memory folder '{path}' is owned by uid 65534, not {PrivateFolder.EffectiveUserId} (owner uid 65534, mode 0700)", e.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [MemberData(nameof(Folders))]
    public void A_symlinked_folder_is_refused(string folder)
    {
        string path = Path.Combine(_root.Path, folder);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!, Private);
        Directory.CreateSymbolicLink(path, _elsewhere.FullName);

        var e = Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("linked", [_root.Path]));

        Assert.Contains($"Shared-memory folder '{path}' is a symbolic link", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Another_users_journal_folder_naming_files_outside_is_refused_and_deletes_nothing()
    {
        // The attack: the journal folder made first, world-writable, with a dead "instance" naming files elsewhere.
        string victim = Victim(_elsewhere.FullName, "passwd");
        string journals = MakeFolder("FaaSCache", UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute);
        File.WriteAllText(Path.Combine(journals, "evil.maps"), $"pid 0 0\n+{victim}\n+../../../../{victim.TrimStart('/')}\n");

        Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("victim", [_root.Path]));

        Assert.True(File.Exists(victim));
    }

    [Fact]
    public void A_hostile_folder_in_a_later_root_is_refused_not_skipped_while_a_missing_root_still_is()
    {
        using var later = new TempShmDirectory();
        string hostile = Path.Combine(later.Path, "AzureFunctions");
        Directory.CreateDirectory(hostile);
        File.SetUnixFileMode(hostile, Private | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute);
        string missing = Path.Combine(Path.GetTempPath(), "faascache-missing-" + Guid.NewGuid().ToString("N"));

        var e = Assert.Throws<SharedMemoryException>(() => new SharedMemoryStore("roots", [missing, _root.Path, later.Path]));
        Assert.Contains($"Shared-memory folder '{hostile}' is writable by group or others", e.Message, StringComparison.Ordinal);

        using var store = new SharedMemoryStore("roots", [missing, _root.Path]);
        Assert.Equal([Path.Combine(_root.Path, "AzureFunctions")], store.MapDirectories);
    }

    [Fact]
    public void Journal_lines_that_are_not_bare_file_names_are_logged_and_delete_nothing_outside()
    {
        string outside = Victim(_root.Path, "outside");
        string absolute = Victim(_elsewhere.FullName, "abs");
        using (new SharedMemoryStore("setup", [_root.Path]))
        {
            // Made by the store: its folders are ours, as they are after any earlier start.
        }

        string maps = Path.Combine(_root.Path, "AzureFunctions");
        string inMaps = Victim(maps, "outside"); // what '../outside' from the recycle folder resolves to
        string stale = Victim(maps, "0123456789abcdef0123456789abcdef");
        string journal = Path.Combine(_root.Path, "FaaSCache", "dead.maps");
        string[] bad = ["+../outside", $"+{absolute}", "?../outside", "+", "+.", "+..", "+a\\b", "+nul\0name"];
        File.WriteAllText(journal, string.Join('\n', ["pid 0 0", .. bad, "+" + Path.GetFileName(stale)]) + "\n");
        var log = new LineLogger();

        using var store = new SharedMemoryStore("sweeper", [_root.Path], log);

        Assert.Equal(1, store.SweptAtStartup);
        Assert.False(File.Exists(stale));
        Assert.True(File.Exists(outside));
        Assert.True(File.Exists(absolute));
        Assert.True(File.Exists(inMaps));
        Assert.Equal(bad.Length, log.Warnings.Count);
        foreach (string line in bad)
        {
            string shown = line.Replace("\0", "\\0", StringComparison.Ordinal);
            Assert.Contains(log.Warnings, w => w.Contains($"Ignored line '{shown}' of shared-memory journal {journal}", StringComparison.Ordinal));
        }
    }

    public void Dispose()
    {
        _root.Dispose();
        _elsewhere.Delete(recursive: true);
    }

    private static string Victim(string folder, string name)
    {
        string path = Path.Combine(folder, name);
        File.WriteAllText(path, "keep me");
        return path;
    }

    private static void Chown(string owner, string path)
    {
        using Process chown = Process.Start("chown", [owner, path]);
        chown.WaitForExit();
        Assert.Equal(0, chown.ExitCode);
    }

    /// <summary>Makes <paramref name="folder"/> under the root (its parents owner-only) with exactly <paramref name="mode"/>.</summary>
    private string MakeFolder(string folder, UnixFileMode mode)
    {
        string path = Path.Combine(_root.Path, folder);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!, Private);
        Directory.CreateDirectory(path);
        File.SetUnixFileMode(path, mode);
        return path;
    }

    /// <summary>A test that gives a folder to another uid: only root may chown, so it is skipped, saying so, for anyone else.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    private sealed class RootFactAttribute : FactAttribute
    {
        public RootFactAttribute()
        {
            if (PrivateFolder.EffectiveUserId != 0)
            {
                Skip = $"needs root: only root may chown a folder to another uid (65534), and this runs as uid {PrivateFolder.EffectiveUserId}";
            }
        }
    }
}
