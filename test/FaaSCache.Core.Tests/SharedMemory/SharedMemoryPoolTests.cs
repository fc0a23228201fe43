namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>The pool of anonymous, pre-journaled files that small maps are made from (so that a small map costs a few system calls).</summary>
[Trait("Category", "Unit")]
public sealed class SharedMemoryPoolTests
{
    [Fact]
    public async Task A_small_map_comes_from_the_pool_complete_with_mode_0600_and_no_pooled_file_is_listed()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("pool", [root.Path]);
        await store.PoolRefill;
        Assert.Equal(SharedMemoryStore.PoolTarget, store.PooledCount);

        using SharedMemoryMap map = store.Create(3);
        map.Content[1] = 7;

        Assert.Equal(1, store.PooledCreates);
        Assert.Equal([map.FilePath], Directory.GetFiles(store.MapDirectory));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(map.FilePath));
        Assert.Equal(new byte[] { 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0 }, File.ReadAllBytes(map.FilePath));
        Assert.Equal(32, map.Name.Length);
        Assert.True(store.Owns(map.Name));
        Assert.Equal(1, store.MapCount);
    }

    [Fact]
    public async Task Takes_below_half_the_pool_refill_it_in_the_background()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("refill", [root.Path]);
        await store.PoolRefill;

        var maps = Enumerable.Range(0, SharedMemoryStore.PoolTarget - 2).Select(i => store.Create(i)).ToList();
        await store.PoolRefill;

        // Every take came from the pool, and the refill started at half ran: without it 2 files would be left. It may
        // have finished (pool full) before the last takes, which do not start another refill above half: at least
        // 16 - 6 are left then.
        Assert.Equal(SharedMemoryStore.PoolTarget - 2, store.PooledCreates);
        Assert.InRange(store.PooledCount, SharedMemoryStore.PoolTarget - 6, SharedMemoryStore.PoolTarget);
        Assert.Equal(maps.Count, Directory.GetFiles(store.MapDirectory).Length);
        maps.ForEach(store.Delete);
        Assert.Empty(Directory.GetFiles(store.MapDirectory));
    }

    [Fact]
    public async Task Pooled_names_are_journaled_before_a_take_and_dispose_closes_the_pool_and_journals_them_removed()
    {
        using var root = new TempShmDirectory();
        var store = new SharedMemoryStore("journal", [root.Path]);
        await store.PoolRefill;
        string journalPath = Path.Combine(store.JournalDirectory, "journal.maps");
        string[] pooled = [.. File.ReadAllLines(journalPath).Where(l => l[0] == '+').Select(l => l[1..])];
        Assert.Equal(SharedMemoryStore.PoolTarget, pooled.Length);

        SharedMemoryMap map = store.Create(100);
        Assert.Contains(map.Name, pooled);
        Assert.Single(File.ReadAllLines(journalPath), "+" + map.Name); // journaled once, before the take
        Assert.True(store.PooledCreates == 1 && store.PooledCount < SharedMemoryStore.PoolTarget);
        await store.PoolRefill;

        // Keep the journal's inode to read it after Dispose deletes it.
        using var journal = new FileStream(journalPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        string[] stillPooled = [.. File.ReadAllLines(journalPath).Where(l => l[0] == '+').Select(l => l[1..]).Where(n => n != map.Name)];
        map.Dispose();
        store.Dispose();

        string[] lines = new StreamReader(journal).ReadToEnd().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.All(stillPooled, name => Assert.Contains("-" + name, lines));
        Assert.Empty(Directory.GetFiles(store.MapDirectory));
        Assert.Empty(Directory.GetFiles(store.JournalDirectory));
        Assert.Empty(OpenFilesUnder(store.MapDirectory));
    }

    [Fact]
    public async Task Maps_made_from_the_pool_by_a_crashed_run_are_swept_at_the_next_start()
    {
        using var root = new TempShmDirectory();
        var crashed = new SharedMemoryStore("host-2", [root.Path]);
        await crashed.PoolRefill;
        SharedMemoryMap a = crashed.Create(10);
        SharedMemoryMap b = crashed.Create(64 * 1024);
        Assert.Equal(2, crashed.PooledCreates);
        a.Dispose();
        b.Dispose();

        // No Dispose: the process "crashed" (its unnamed pooled files die with it). The same instance starts again.
        using var restarted = new SharedMemoryStore("host-2", [root.Path]);
        Assert.Equal(2, restarted.SweptAtStartup);
        Assert.Empty(Directory.GetFiles(restarted.MapDirectory));
    }

    [Fact]
    public async Task Concurrent_small_creates_give_distinct_complete_maps_and_leave_nothing_after_dispose()
    {
        using var root = new TempShmDirectory();
        var store = new SharedMemoryStore("busy", [root.Path]);
        await store.PoolRefill;

        SharedMemoryMap[][] made = await Task.WhenAll(Enumerable.Range(0, 4).Select(t => Task.Run(() =>
            Enumerable.Range(0, 50).Select(i =>
            {
                SharedMemoryMap m = store.Create(t * 1000 + i);
                m.Write(BitConverter.GetBytes(i).AsSpan(0, Math.Min(4, (int)m.ContentLength)), 0);
                return m;
            }).ToArray())));

        SharedMemoryMap[] all = [.. made.SelectMany(m => m)];
        Assert.Equal(all.Length, all.Select(m => m.Name).Distinct().Count());
        Assert.Equal(all.Length, store.MapCount);
        Assert.True(store.PooledCreates > 0);
        Assert.All(all, m => Assert.Equal(SharedMemoryMap.HeaderSize + m.ContentLength, new FileInfo(m.FilePath).Length));
        foreach (SharedMemoryMap m in all)
        {
            m.Dispose();
        }

        store.Dispose();
        Assert.Empty(Directory.GetFiles(store.MapDirectory));
        Assert.Empty(Directory.GetFiles(store.JournalDirectory));
        Assert.Empty(OpenFilesUnder(store.MapDirectory));
    }

    /// <summary>This process's open files in <paramref name="directory"/>, named or not (an unnamed one reads "dir/#123 (deleted)").</summary>
    private static List<string> OpenFilesUnder(string directory) =>
        [.. Directory.EnumerateFileSystemEntries("/proc/self/fd").Select(LinkTarget).OfType<string>().Where(t => t.StartsWith(directory + "/", StringComparison.Ordinal))];

    private static string? LinkTarget(string fd)
    {
        try
        {
            return new FileInfo(fd).LinkTarget;
        }
        catch (IOException)
        {
            return null; // closed meanwhile by another test
        }
    }
}
