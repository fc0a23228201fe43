using System.Collections.Concurrent;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// Uncommitted blocks (Put Block) until their Put Block List: kept in this host, per blob, each id replacing an earlier
/// block with the same id, all of a blob's blocks dropped once its list commits. Uncommitted blocks are not data
/// (storage drops them after a week, and an SDK that loses them re-uploads), so a host that restarts loses none.
/// The total staged is bounded so that uploads cannot take the memory the cache and the functions need.
/// </summary>
public sealed class BlockStaging
{
    private readonly ConcurrentDictionary<string, Staged> _blobs = new(StringComparer.Ordinal);
    private readonly long _maxBytes;
    private readonly TimeProvider _time;
    private long _bytes;

    /// <summary>Initializes a new instance of the <see cref="BlockStaging"/> class.</summary>
    /// <param name="maxBytes">The most bytes staged at once over all blobs.</param>
    /// <param name="time">The clock (blocks older than an hour are dropped).</param>
    public BlockStaging(long maxBytes, TimeProvider time)
    {
        _maxBytes = maxBytes;
        _time = time;
    }

    /// <summary>Gets the bytes staged now.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Stages a block; false when staging it would pass the bound (the caller answers 503 ServerBusy, which SDKs retry).</summary>
    public bool TryStage(string key, string blockId, byte[] data)
    {
        DropStale();
        if (Interlocked.Add(ref _bytes, data.Length) > _maxBytes)
        {
            Interlocked.Add(ref _bytes, -data.Length);
            return false;
        }

        Staged staged = _blobs.GetOrAdd(key, _ => new Staged());
        lock (staged)
        {
            staged.Touched = _time.GetUtcNow();
            if (staged.Blocks.TryGetValue(blockId, out byte[]? old))
            {
                Interlocked.Add(ref _bytes, -old.Length);
            }

            staged.Blocks[blockId] = data;
        }

        return true;
    }

    /// <summary>
    /// The blocks a list names, in order; null with the first unknown id when one is not staged. Only uncommitted
    /// blocks are here: a list naming a committed block of an earlier upload is refused (400 InvalidBlockList).
    /// </summary>
    public (IReadOnlyList<byte[]>? Blocks, string? Missing) Resolve(string key, IReadOnlyList<string> ids)
    {
        if (!_blobs.TryGetValue(key, out Staged? staged))
        {
            return (null, ids.Count > 0 ? ids[0] : null);
        }

        lock (staged)
        {
            var blocks = new List<byte[]>(ids.Count);
            foreach (string id in ids)
            {
                if (!staged.Blocks.TryGetValue(id, out byte[]? data))
                {
                    return (null, id);
                }

                blocks.Add(data);
            }

            return (blocks, null);
        }
    }

    /// <summary>Drops every staged block of <paramref name="key"/> (after its list committed).</summary>
    public void Clear(string key)
    {
        if (_blobs.TryRemove(key, out Staged? staged))
        {
            lock (staged)
            {
                Interlocked.Add(ref _bytes, -staged.Blocks.Values.Sum(b => (long)b.Length));
                staged.Blocks.Clear();
            }
        }
    }

    private void DropStale()
    {
        DateTimeOffset cutoff = _time.GetUtcNow() - TimeSpan.FromHours(1);
        foreach ((string key, Staged staged) in _blobs)
        {
            if (staged.Touched < cutoff)
            {
                Clear(key);
            }
        }
    }

    private sealed class Staged
    {
        public Dictionary<string, byte[]> Blocks { get; } = new(StringComparer.Ordinal);

        public DateTimeOffset Touched { get; set; }
    }
}
