namespace FaaSCache.Caching;

/// <summary>One asynchronous mutex per key, kept only while someone holds or waits for it.</summary>
internal sealed class KeyedAsyncLock
{
    private readonly Dictionary<string, Slot> _slots = new(StringComparer.Ordinal);

    /// <summary>Waits until no one else holds <paramref name="key"/>; dispose the result to let the next one in.</summary>
    public async Task<IDisposable> LockAsync(string key, CancellationToken cancellationToken)
    {
        Slot slot;
        lock (_slots)
        {
            if (!_slots.TryGetValue(key, out Slot? existing))
            {
                existing = new Slot();
                _slots[key] = existing;
            }

            slot = existing;
            slot.Users++;
        }

        try
        {
            await slot.Gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            Leave(key, slot);
            throw;
        }

        return new Holder(this, key, slot);
    }

    private void Leave(string key, Slot slot)
    {
        lock (_slots)
        {
            if (--slot.Users == 0)
            {
                _slots.Remove(key);
                slot.Gate.Dispose();
            }
        }
    }

    private sealed class Slot
    {
        public SemaphoreSlim Gate { get; } = new(1, 1);

        public int Users { get; set; }
    }

    private sealed class Holder(KeyedAsyncLock owner, string key, Slot slot) : IDisposable
    {
        private int _released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _released, 1) == 0)
            {
                slot.Gate.Release();
                owner.Leave(key, slot);
            }
        }
    }
}
