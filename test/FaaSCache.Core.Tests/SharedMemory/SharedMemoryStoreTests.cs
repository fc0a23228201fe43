namespace FaaSCache.Core.Tests.SharedMemory;

[Trait("Category", "Unit")]
public sealed class SharedMemoryStoreTests
{
    [Fact]
    public void Maps_of_a_crashed_run_of_the_same_instance_are_swept_at_start_up()
    {
        using var root = new TempShmDirectory();
        var crashed = new SharedMemoryStore("host-1", [root.Path]);
        SharedMemoryMap a = crashed.Create(10);
        SharedMemoryMap b = crashed.Create(20);
        a.Dispose();
        b.Dispose();

        // No Dispose: the process "crashed". The same instance starts again.
        using var restarted = new SharedMemoryStore("host-1", [root.Path]);
        Assert.Equal(2, restarted.SweptAtStartup);
        Assert.Empty(Directory.GetFiles(restarted.MapDirectory));
    }

    [Fact]
    public async Task Maps_of_a_dead_process_are_swept_but_those_of_a_live_other_instance_are_not()
    {
        using var root = new TempShmDirectory();
        using var live = new SharedMemoryStore("live", [root.Path]);
        using SharedMemoryMap liveMap = live.Create(5);

        // A journal left by a process that has exited, listing one map.
        using var dead = Process.Start(new ProcessStartInfo("/bin/true"))!;
        await dead.WaitForExitAsync();
        string orphan = Guid.NewGuid().ToString("N");
        await File.WriteAllBytesAsync(Path.Combine(live.MapDirectory, orphan), [1, 0, 0, 0, 0, 0, 0, 0, 0]);
        await File.WriteAllTextAsync(Path.Combine(live.JournalDirectory, "gone.maps"), $"pid {dead.Id} 12345\n+{orphan}\n");

        using var starting = new SharedMemoryStore("new", [root.Path]);
        Assert.Equal(1, starting.SweptAtStartup);
        Assert.False(File.Exists(Path.Combine(live.MapDirectory, orphan)));
        Assert.True(File.Exists(liveMap.FilePath));
        Assert.Equal(1, live.MapCount);
        Assert.Equal(0, starting.MapCount);
    }

    [Fact]
    public void Dispose_removes_every_map_and_the_journal()
    {
        using var root = new TempShmDirectory();
        var store = new SharedMemoryStore("tidy", [root.Path]);
        store.Create(1).Dispose();
        store.Create(2).Dispose();
        store.Dispose();
        Assert.Empty(Directory.GetFiles(store.MapDirectory));
        Assert.Empty(Directory.GetFiles(store.JournalDirectory));
    }

    [Fact]
    public void Maps_are_created_with_mode_0600_and_the_host_header()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("perm", [root.Path]);
        using SharedMemoryMap map = store.Create(3);
        map.Content[0] = 42;
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(map.FilePath));
        Assert.Equal(Path.Combine(root.Path, "AzureFunctions"), store.MapDirectory);

        byte[] file = File.ReadAllBytes(map.FilePath);
        Assert.Equal(new byte[] { 1, 3, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0 }, file);
    }

    [Fact]
    public void The_directory_list_comes_from_the_app_setting_and_falls_back_past_unusable_entries()
    {
        using var root = new TempShmDirectory();
        string? before = Environment.GetEnvironmentVariable(SharedMemoryStore.DirectoriesSetting);
        try
        {
            Environment.SetEnvironmentVariable(SharedMemoryStore.DirectoriesSetting, $"/proc/not-writable, {root.Path}");
            using var store = new SharedMemoryStore("env");
            Assert.Equal(Path.Combine(root.Path, "AzureFunctions"), store.MapDirectory);
        }
        finally
        {
            Environment.SetEnvironmentVariable(SharedMemoryStore.DirectoriesSetting, before);
        }
    }

    [Fact]
    public void An_invalid_instance_id_is_rejected_naming_it()
    {
        var e = Assert.Throws<ArgumentException>(() => new SharedMemoryStore("../x", ["/dev/shm"]));
        Assert.Contains("'../x'", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_written_map_is_visible_through_a_second_mapping_without_copying()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("zc", [root.Path]);
        using SharedMemoryMap map = store.Create(4);
        using var other = System.IO.MemoryMappedFiles.MemoryMappedFile.CreateFromFile(map.FilePath, FileMode.Open);
        using var view = other.CreateViewAccessor();
        view.Write(SharedMemoryMap.HeaderSize + 2, (byte)99);
        Assert.Equal(99, map.Content[2]);
    }
}
