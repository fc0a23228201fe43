namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Which of a blob's blocks a Put Block List entry names (its element: Latest, Uncommitted or Committed).</summary>
public enum BlockListSection
{
    /// <summary>The uncommitted block with the id if there is one, else the committed one.</summary>
    Latest,

    /// <summary>The uncommitted block with the id.</summary>
    Uncommitted,

    /// <summary>The block with the id in the blob as last committed.</summary>
    Committed,
}

/// <summary>One entry of a Put Block List.</summary>
/// <param name="Section">The element it is in.</param>
/// <param name="Id">The block id.</param>
public readonly record struct BlockListEntry(BlockListSection Section, string Id);

/// <summary>One block of a list resolved here: staged bytes, or a range of the blob as committed through this endpoint.</summary>
/// <param name="Staged">The staged block's bytes, or null for a committed block.</param>
/// <param name="Offset">Where a committed block starts in the committed blob.</param>
/// <param name="Length">The block's length.</param>
public readonly record struct ResolvedBlock(byte[]? Staged, long Offset, long Length);

/// <summary>
/// Uncommitted blocks (Put Block) until their Put Block List: kept in this host, per blob, each id replacing an earlier
/// block with the same id, all of a blob's blocks dropped once its list commits. Uncommitted blocks are not data
/// (storage drops them after a week, and an SDK that loses them re-uploads), so a host that restarts loses none.
/// The total staged is bounded so that uploads cannot take the memory the cache and the functions need.
/// The block ids of the lists committed here are remembered (ids and lengths, not bytes; the most recent
/// <see cref="MaxCommittedBlobs"/> blobs), so that a later list naming them (an append of a block to a blob) resolves
/// here against the committed version: storage never saw those ids (the cache writes the assembled blob).
/// </summary>
public sealed class BlockStaging
{
    /// <summary>How many blobs' committed block lists are remembered at most.</summary>
    public const int MaxCommittedBlobs = 1024;

    /// <summary>How many committed block ids are remembered at most over all blobs.</summary>
    public const int MaxCommittedIds = 256 * 1024;

    private readonly ConcurrentDictionary<string, Staged> _blobs = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Committed> _committed = new(StringComparer.Ordinal);
    private readonly Lock _committedGate = new();
    private long _committedIds;
    private long _committedSequence;
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

        while (true)
        {
            // A new blob's entry is touched from the start: a concurrent DropStale must not take it for an hour old.
            Staged staged = _blobs.GetOrAdd(key, _ => new Staged { Touched = _time.GetUtcNow() });
            lock (staged)
            {
                if (staged.Removed)
                {
                    // Cleared between the lookup and the lock (a commit, or stale): stage into the blob's new entry.
                    continue;
                }

                staged.Touched = _time.GetUtcNow();
                if (staged.Blocks.TryGetValue(blockId, out byte[]? old))
                {
                    Interlocked.Add(ref _bytes, -old.Length);
                }

                staged.Blocks[blockId] = data;
                return true;
            }
        }
    }

    /// <summary>
    /// The blocks a list names, in order, resolved as storage resolves them against the blocks staged here and the list
    /// last committed here: null when an id is found in neither (the caller forwards the list to storage, which may know
    /// it). <c>CommittedVersion</c> is the version the committed ranges are of, when the list names any.
    /// </summary>
    public (IReadOnlyList<ResolvedBlock>? Blocks, string? CommittedVersion) Resolve(string key, IReadOnlyList<BlockListEntry> entries)
    {
        ArgumentNullException.ThrowIfNull(entries);
        _blobs.TryGetValue(key, out Staged? staged);
        _committed.TryGetValue(key, out Committed? committed);
        var blocks = new List<ResolvedBlock>(entries.Count);
        bool usesCommitted = false;
        foreach (BlockListEntry entry in entries)
        {
            byte[]? data = null;
            if (entry.Section != BlockListSection.Committed && staged is not null)
            {
                lock (staged)
                {
                    staged.Blocks.TryGetValue(entry.Id, out data);
                }
            }

            if (data is not null)
            {
                blocks.Add(new ResolvedBlock(data, 0, data.Length));
            }
            else if (entry.Section != BlockListSection.Uncommitted && committed is not null && committed.Ranges.TryGetValue(entry.Id, out (long Offset, long Length) range))
            {
                blocks.Add(new ResolvedBlock(null, range.Offset, range.Length));
                usesCommitted = true;
            }
            else
            {
                return (null, null);
            }
        }

        return (blocks, usesCommitted ? committed!.Version : null);
    }

    /// <summary>The blocks staged here that <paramref name="entries"/> name as uncommitted (Latest or Uncommitted), once each.</summary>
    public IReadOnlyList<(string Id, byte[] Data)> StagedNamed(string key, IReadOnlyList<BlockListEntry> entries)
    {
        ArgumentNullException.ThrowIfNull(entries);
        if (!_blobs.TryGetValue(key, out Staged? staged))
        {
            return [];
        }

        lock (staged)
        {
            return [.. entries.Where(e => e.Section != BlockListSection.Committed).Select(e => e.Id).Distinct(StringComparer.Ordinal)
                .Where(staged.Blocks.ContainsKey).Select(id => (id, staged.Blocks[id]))];
        }
    }

    /// <summary>Remembers the list just committed here as <paramref name="version"/> of <paramref name="key"/>: each id's range in the blob.</summary>
    public void RememberCommitted(string key, string version, IReadOnlyList<BlockListEntry> entries, IReadOnlyList<ResolvedBlock> blocks)
    {
        ArgumentNullException.ThrowIfNull(entries);
        ArgumentNullException.ThrowIfNull(blocks);
        var ranges = new Dictionary<string, (long Offset, long Length)>(StringComparer.Ordinal);
        long offset = 0;
        for (int i = 0; i < entries.Count; i++)
        {
            ranges.TryAdd(entries[i].Id, (offset, blocks[i].Length));
            offset += blocks[i].Length;
        }

        lock (_committedGate)
        {
            ForgetCommittedLocked(key);
            if (ranges.Count > MaxCommittedIds)
            {
                return;
            }

            while (_committed.Count >= MaxCommittedBlobs || _committedIds + ranges.Count > MaxCommittedIds)
            {
                ForgetCommittedLocked(_committed.MinBy(c => c.Value.Sequence).Key);
            }

            _committed[key] = new Committed(version, ranges, Interlocked.Increment(ref _committedSequence));
            _committedIds += ranges.Count;
        }
    }

    /// <summary>Forgets the list committed here for <paramref name="key"/> (the blob was written or deleted another way).</summary>
    public void ForgetCommitted(string key)
    {
        if (!_committed.ContainsKey(key))
        {
            return;
        }

        lock (_committedGate)
        {
            ForgetCommittedLocked(key);
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
                staged.Removed = true;
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

    private void ForgetCommittedLocked(string key)
    {
        if (_committed.TryRemove(key, out Committed? old))
        {
            _committedIds -= old.Ranges.Count;
        }
    }

    private sealed record Committed(string Version, Dictionary<string, (long Offset, long Length)> Ranges, long Sequence);

    private sealed class Staged
    {
        public Dictionary<string, byte[]> Blocks { get; } = new(StringComparer.Ordinal);

        public DateTimeOffset Touched { get; set; }

        /// <summary>Gets or sets a value indicating whether the entry was taken out of the map (blocks go to a new one).</summary>
        public bool Removed { get; set; }
    }
}
