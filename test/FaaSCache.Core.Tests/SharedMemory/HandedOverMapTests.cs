namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>
/// Maps a worker hands over (its outputs): taken over only once nobody else holds them, deleted once nobody holds them
/// when they are not taken over, and swept after a crash like the host's own maps (they are journaled '?' first).
/// "Another holder" is an open descriptor, which leases see within one process as well as across processes.
/// </summary>
[Trait("Category", "Unit")]
public sealed class HandedOverMapTests
{
    [Fact]
    public void A_map_its_writer_still_holds_is_refused_as_in_use_and_taken_over_once_the_writer_closes_it()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("adopt", [root.Path]);
        string name = WriteWorkerMap(store, "FAAST-BLOB");
        FileStream writer = File.Open(Path.Combine(store.MapDirectory, name), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);

        SharedMemoryMapInUseException refused = Assert.Throws<SharedMemoryMapInUseException>(() => store.AdoptHandedOver(name, 10));
        Assert.Contains($"'{name}' is open in another process", refused.Message, StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(store.MapDirectory, name)), "a refused map that someone holds is never deleted");

        writer.Dispose();
        using SharedMemoryMap adopted = store.AdoptHandedOver(name, 10);
        Assert.True(store.Owns(name));
        Assert.Equal("FAAST-BLOB"u8.ToArray(), adopted.Content.ToArray());
    }

    [Fact]
    public async Task A_map_that_is_not_taken_over_is_deleted_as_soon_as_its_last_holder_lets_go()
    {
        using var root = new TempShmDirectory();
        using var store = new SharedMemoryStore("discard", [root.Path]);
        string name = WriteWorkerMap(store, "kept open");
        string path = Path.Combine(store.MapDirectory, name);
        FileStream writer = File.Open(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        store.TrackHandedOver(name);

        Assert.False(store.DiscardWhenFree(name));
        Assert.Equal(1, store.PendingDiscards);
        Assert.True(File.Exists(path));

        writer.Dispose();
        for (int i = 0; i < 100 && File.Exists(path); i++)
        {
            await Task.Delay(50);
        }

        Assert.False(File.Exists(path), "deleted by the retry once nobody held it");
        Assert.Equal(0, store.PendingDiscards);
    }

    [Fact]
    public void A_handed_over_map_still_held_when_the_host_crashed_is_swept_at_the_next_start()
    {
        using var root = new TempShmDirectory();
        var crashed = new SharedMemoryStore("host-1", [root.Path]);
        string name = WriteWorkerMap(crashed, "orphan");
        string path = Path.Combine(crashed.MapDirectory, name);
        using (File.Open(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite))
        {
            Assert.Throws<SharedMemoryMapInUseException>(() => crashed.AdoptHandedOver(name, 6));
        }

        // No Dispose: the host "crashed" (its worker died with it). The same instance starts again.
        using var restarted = new SharedMemoryStore("host-1", [root.Path]);
        Assert.Equal(1, restarted.SweptAtStartup);
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void A_handed_over_map_taken_over_is_the_stores_own_and_dispose_removes_it_and_the_journal()
    {
        using var root = new TempShmDirectory();
        var store = new SharedMemoryStore("owned", [root.Path]);
        string name = WriteWorkerMap(store, "mine now");
        store.AdoptHandedOver(name, 8).Dispose();

        store.Dispose();

        Assert.Empty(Directory.GetFiles(store.MapDirectory));
        Assert.Empty(Directory.GetFiles(store.JournalDirectory));
    }

    /// <summary>A map as a worker writes one for an output: header and content, in the store's map folder.</summary>
    private static string WriteWorkerMap(SharedMemoryStore store, string text)
    {
        string name = Guid.NewGuid().ToString();
        byte[] content = System.Text.Encoding.UTF8.GetBytes(text);
        byte[] file = new byte[9 + content.Length];
        file[0] = 1;
        BitConverter.TryWriteBytes(file.AsSpan(1, 8), (long)content.Length);
        content.CopyTo(file, 9);
        File.WriteAllBytes(Path.Combine(store.MapDirectory, name), file);
        return name;
    }
}
