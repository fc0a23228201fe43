using System.Threading.Channels;

namespace FaaSCache.Caching;

/// <summary>
/// Deletes the maps the cache no longer holds: a large one is unmapped and unlinked by a background loop (tens of ms at
/// 128 MB), off the reader's path; a small one, or any once the loop stopped, at once. Owns its queue and loop.
/// </summary>
internal sealed class MapDeleter
{
    /// <summary>Maps from this size up are deleted in the background.</summary>
    public const long BackgroundThreshold = 8L << 20;

    private readonly Channel<SharedMemoryMap> _queue = Channel.CreateUnbounded<SharedMemoryMap>(new UnboundedChannelOptions { SingleReader = true });
    private readonly SharedMemoryStore _shm;
    private readonly Task _loop;

    public MapDeleter(SharedMemoryStore shm)
    {
        _shm = shm;
        _loop = Task.Run(LoopAsync);
    }

    /// <summary>Deletes <paramref name="map"/>, in the background when it is large.</summary>
    public void Delete(SharedMemoryMap map)
    {
        if (map.ContentLength < BackgroundThreshold || !_queue.Writer.TryWrite(map))
        {
            _shm.Delete(map);
        }
    }

    /// <summary>Deletes what is queued and stops the loop; later deletions run at once.</summary>
    public async Task StopAsync()
    {
        _queue.Writer.TryComplete();
        await _loop.ConfigureAwait(false);
    }

    private async Task LoopAsync()
    {
        await foreach (SharedMemoryMap map in _queue.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            _shm.Delete(map);
        }
    }
}
