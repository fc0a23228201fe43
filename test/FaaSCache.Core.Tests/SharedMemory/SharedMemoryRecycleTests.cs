namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>Large maps' files kept after their map is deleted and written over by the next large map of about their size.</summary>
[Trait("Category", "Unit")]
public sealed class SharedMemoryRecycleTests
{
    private const int Mib = 1 << 20;

    [Fact]
    public void A_deleted_large_maps_file_is_kept_out_of_the_map_folder_and_the_next_map_of_about_its_size_is_made_over_it()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("recycle", [root.Path]);
        SharedMemoryMap first = store.Create(2 * Mib);
        first.Content.Fill(0xAB);
        string kept = Path.Combine(SharedMemoryStore.RecycleFolder(store.MapDirectory), first.Name);

        store.Delete(first);

        Assert.Empty(Directory.GetFiles(store.MapDirectory));
        Assert.True(File.Exists(kept));
        Assert.Equal(0, store.MapCount);
        Assert.Equal(SharedMemoryMap.HeaderSize + (2 * Mib), store.KeptBytes);

        // Smaller, but more than half: made over the kept file, cut to its own size, with its own name and header.
        using SharedMemoryMap second = store.Create((3 * Mib / 2) + 5);
        Assert.Equal(1, store.RecycledCreates);
        Assert.False(File.Exists(kept));
        Assert.Equal(0, store.KeptBytes);
        Assert.NotEqual(first.Name, second.Name);
        Assert.Equal(SharedMemoryMap.HeaderSize + (3 * Mib / 2) + 5, new FileInfo(second.FilePath).Length);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(second.FilePath));
        byte[] header = File.ReadAllBytes(second.FilePath)[..SharedMemoryMap.HeaderSize];
        Assert.Equal(1, header[0]);
        Assert.Equal((3L * Mib / 2) + 5, BitConverter.ToInt64(header, 1));
        Assert.Equal([second.FilePath], Directory.GetFiles(store.MapDirectory));
        Assert.True(store.Owns(second.Name));
    }

    [Fact]
    public void Small_maps_and_maps_more_than_twice_a_new_ones_size_are_not_made_over()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("recycle-sizes", [root.Path]);
        store.Delete(store.Create(64 * 1024));
        Assert.Equal(0, store.KeptBytes);

        store.Delete(store.Create(8 * Mib));
        using SharedMemoryMap small = store.Create(2 * Mib);
        using SharedMemoryMap larger = store.Create(9 * Mib);

        Assert.Equal(0, store.RecycledCreates);
        Assert.Equal(SharedMemoryMap.HeaderSize + (8 * Mib), store.KeptBytes);
    }

    [Fact]
    public void A_file_another_process_still_holds_is_deleted_not_kept()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("recycle-held", [root.Path]);
        SharedMemoryMap map = store.Create(2 * Mib);
        map.Content.Fill(0x5A);
        string path = map.FilePath;

        // A worker that kept the input past its invocation: its pages must never be written over.
        using var holder = new ChildProcessHoldingFile(path);
        store.Delete(map);

        Assert.Equal(0, store.KeptBytes);
        Assert.False(File.Exists(path));
        string folder = SharedMemoryStore.RecycleFolder(store.MapDirectory);
        Assert.False(Directory.Exists(folder) && Directory.EnumerateFiles(folder).Any());
    }

    [Fact]
    public void Kept_files_go_when_the_store_is_disposed_and_a_crashed_runs_kept_files_are_swept_at_start_up()
    {
        using var root = new TempShmDirectory();
        var store = new SharedMemoryStore("recycle-life", [root.Path]);
        SharedMemoryMap map = store.Create(2 * Mib);
        string kept = Path.Combine(SharedMemoryStore.RecycleFolder(store.MapDirectory), map.Name);
        store.Delete(map);
        Assert.True(File.Exists(kept));
        store.Dispose();
        Assert.False(File.Exists(kept));

        // No Dispose: the process "crashed" with a kept file; the same instance starts again.
        var crashed = new SharedMemoryStore("recycle-crash", [root.Path]);
        SharedMemoryMap other = crashed.Create(3 * Mib);
        string keptByCrashed = Path.Combine(SharedMemoryStore.RecycleFolder(crashed.MapDirectory), other.Name);
        crashed.Delete(other);
        Assert.True(File.Exists(keptByCrashed));

        using var restarted = new SharedMemoryStore("recycle-crash", [root.Path]);
        Assert.False(File.Exists(keptByCrashed));
        Assert.Equal(1, restarted.SweptAtStartup);
    }

    [Fact]
    public void The_journal_keeps_a_kept_files_name_until_it_is_taken_or_dropped()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("recycle-journal", [root.Path]);
        string journal = Path.Combine(store.JournalDirectory, "recycle-journal.maps");
        SharedMemoryMap map = store.Create(2 * Mib);
        store.Delete(map);
        Assert.DoesNotContain("-" + map.Name, ReadLines(journal));

        using SharedMemoryMap next = store.Create(2 * Mib);

        string[] lines = ReadLines(journal);
        Assert.Contains("-" + map.Name, lines);
        Assert.Contains("+" + next.Name, lines);
    }

    private static string[] ReadLines(string path)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        return new StreamReader(stream).ReadToEnd().Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }

    /// <summary>A process (sleep, its stdin redirected from the file) that holds <c>path</c> open until disposed.</summary>
    private sealed class ChildProcessHoldingFile : IDisposable
    {
        private readonly System.Diagnostics.Process _process;

        public ChildProcessHoldingFile(string path)
        {
            _process = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("/bin/sh", ["-c", $"exec sleep 60 < '{path}'"]))!;
            // Until the shell has opened the file, nobody holds it.
            for (int i = 0; i < 500 && !Holds(path); i++)
            {
                Thread.Sleep(10);
            }
        }

        public void Dispose()
        {
            _process.Kill();
            _process.WaitForExit();
            _process.Dispose();
        }

        private bool Holds(string path)
        {
            try
            {
                return Directory.EnumerateFiles($"/proc/{_process.Id}/fd").Any(fd => new FileInfo(fd).LinkTarget == path);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return false;
            }
        }
    }
}
