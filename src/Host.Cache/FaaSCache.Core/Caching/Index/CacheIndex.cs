using FaaSCache.Caching.Policies;

namespace FaaSCache.Caching.Index;

/// <summary>
/// §3.4: the objects one cachelet holds, the bytes they and the transfers under way take against the capacity, the four
/// eviction lists (owned or not, large or not, each least-recently-used first), TTLs, and the choice of victims, every
/// decision taken by <see cref="EvictionRules"/>. The cachelet and the simulator both keep their objects here. Not
/// thread-safe: the owner's lock guards it (the cachelet's gate; the simulator runs one thread per app).
/// </summary>
/// <typeparam name="TKey">The key's type.</typeparam>
/// <typeparam name="TEntry">The entry's type.</typeparam>
public sealed class CacheIndex<TKey, TEntry>
    where TKey : notnull
    where TEntry : IndexedEntry<TKey, TEntry>
{
    private readonly EvictionOptions _eviction;
    private readonly Dictionary<TKey, TEntry> _entries;

    // [owned ? 1 : 0][large ? 1 : 0], each least-recently-used first.
    private readonly LinkedList<TEntry>[][] _lru =
    [
        [new LinkedList<TEntry>(), new LinkedList<TEntry>()],
        [new LinkedList<TEntry>(), new LinkedList<TEntry>()],
    ];

    private long _bytes;
    private long _touchClock;

    /// <summary>Initializes a new instance of the <see cref="CacheIndex{TKey, TEntry}"/> class.</summary>
    /// <param name="eviction">The app's eviction settings.</param>
    /// <param name="capacityBytes">The bytes the cached objects may take.</param>
    /// <param name="comparer">The keys' comparer (default: the type's).</param>
    public CacheIndex(EvictionOptions eviction, long capacityBytes, IEqualityComparer<TKey>? comparer = null)
    {
        ArgumentNullException.ThrowIfNull(eviction);
        _eviction = eviction;
        CapacityBytes = capacityBytes;
        _entries = new Dictionary<TKey, TEntry>(comparer);
    }

    /// <summary>Gets the capacity in bytes.</summary>
    public long CapacityBytes { get; }

    /// <summary>Gets the bytes cached and reserved for transfers under way (readable without the owner's lock).</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Gets the number of objects.</summary>
    public int Count => _entries.Count;

    /// <summary>Gets the objects evicted to make room since the index was made.</summary>
    public long Evictions { get; private set; }

    /// <summary>Gets every entry, in no order.</summary>
    public IEnumerable<TEntry> Entries => _entries.Values;

    /// <summary>Whether an object of <paramref name="size"/> bytes can be cached at all.</summary>
    public bool Admits(long size) => EvictionRules.Admits(size, CapacityBytes);

    /// <summary>Whether an object of <paramref name="size"/> bytes is large under the policy (its own eviction lists).</summary>
    public bool IsLarge(long size) => EvictionRules.IsLarge(_eviction, size);

    /// <summary>The entry of <paramref name="key"/>, expired or not.</summary>
    public bool TryGetValue(TKey key, [System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out TEntry entry) => _entries.TryGetValue(key, out entry);

    /// <summary>Whether <paramref name="key"/> has an entry.</summary>
    public bool ContainsKey(TKey key) => _entries.ContainsKey(key);

    /// <summary>
    /// Reserves <paramref name="size"/> bytes, evicting by policy what must go for them; null (nothing evicted, nothing
    /// reserved) when the object cannot be cached. <paramref name="shortOfRoom"/> is what the storage under the objects
    /// lacks besides the capacity (a shared-memory directory's free space). The victims returned are detached.
    /// </summary>
    public IReadOnlyList<TEntry>? TryReserve(long size, DateTimeOffset now, long shortOfRoom = 0)
    {
        if (!Admits(size))
        {
            return null;
        }

        long excess = Math.Max(_bytes + size - CapacityBytes, shortOfRoom);
        List<TEntry> victims = [];
        if (excess > 0)
        {
            if (EvictionRules.PickVictims(VictimOrder(now), excess, static e => e.Size) is not { } picked)
            {
                return null;
            }

            foreach (TEntry victim in picked)
            {
                Detach(victim);
            }

            Evictions += picked.Count;
            victims = picked;
        }

        Interlocked.Add(ref _bytes, size);
        return victims;
    }

    /// <summary>Reserves <paramref name="size"/> bytes only if they are free now (and <paramref name="roomElsewhere"/>); evicts nothing.</summary>
    public bool TryReserveFree(long size, bool roomElsewhere = true)
    {
        if (_bytes + size > CapacityBytes || !roomElsewhere)
        {
            return false;
        }

        Interlocked.Add(ref _bytes, size);
        return true;
    }

    /// <summary>Returns a reservation that did not become an entry.</summary>
    public void Unreserve(long size) => Interlocked.Add(ref _bytes, -size);

    /// <summary>
    /// Adds <paramref name="entry"/>, whose bytes are reserved, as the most recently used of its list; returns the older
    /// entry of the key it replaced (detached), if any.
    /// </summary>
    public TEntry? Insert(TEntry entry, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(entry);
        TEntry? old = _entries.TryGetValue(entry.Key, out TEntry? previous) && Detach(previous) ? previous : null;
        _entries[entry.Key] = entry;
        if (EvictionRules.ExpiresAt(_eviction, now) is { } expiresAt)
        {
            entry.ExpiresAt = expiresAt;
        }

        entry.LastTouch = ++_touchClock;
        entry.Node = ListOf(entry).AddLast(entry);
        return old;
    }

    /// <summary>Makes <paramref name="entry"/> the most recently used of its list.</summary>
    public void Touch(TEntry entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        entry.LastTouch = ++_touchClock;
        if (entry.Node is { } node)
        {
            LinkedList<TEntry> list = ListOf(entry);
            list.Remove(node);
            list.AddLast(node);
        }
    }

    /// <summary>Takes <paramref name="entry"/> out and returns its bytes; false when it was out already.</summary>
    public bool Detach(TEntry entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        if (entry.Detached)
        {
            return false;
        }

        entry.Detached = true;
        if (_entries.TryGetValue(entry.Key, out TEntry? current) && ReferenceEquals(current, entry))
        {
            _entries.Remove(entry.Key);
        }

        if (entry.Node is { } node)
        {
            ListOf(entry).Remove(node);
            entry.Node = null;
        }

        Interlocked.Add(ref _bytes, -entry.Size);
        return true;
    }

    /// <summary>
    /// The ring changed: each entry is owned or not as <paramref name="owned"/> says, and moves to its ownership's list
    /// keeping that list in last-touch order; returns how many moved.
    /// </summary>
    public int Reown(Func<TEntry, bool> owned)
    {
        ArgumentNullException.ThrowIfNull(owned);
        List<TEntry> moving = [.. _entries.Values.Where(e => e.Owned != owned(e))];
        if (moving.Count == 0)
        {
            return 0;
        }

        TEntry[] all = [.. _entries.Values.OrderBy(e => e.LastTouch)];
        foreach (LinkedList<TEntry> list in _lru.SelectMany(l => l))
        {
            list.Clear();
        }

        foreach (TEntry entry in moving)
        {
            entry.Owned = !entry.Owned;
        }

        foreach (TEntry entry in all)
        {
            entry.Node = ListOf(entry).AddLast(entry);
        }

        return moving.Count;
    }

    /// <summary>The entries whose TTL ran out at <paramref name="now"/> and that nobody uses.</summary>
    public IReadOnlyList<TEntry> Expired(DateTimeOffset now) => [.. _entries.Values.Where(e => !e.Pinned && e.IsExpiredAt(now))];

    /// <summary>Objects in eviction order: expired ones first, then by policy; never one that is pinned.</summary>
    public IEnumerable<TEntry> VictimOrder(DateTimeOffset now)
        => EvictionRules.VictimOrder(_eviction, _lru, static e => e.LastTouch, e => e.IsExpiredAt(now), static e => !e.Pinned);

    /// <summary>Detaches every entry and returns them (their bytes go; reservations under way stay).</summary>
    public IReadOnlyList<TEntry> Clear()
    {
        TEntry[] all = [.. _entries.Values];
        foreach (TEntry entry in all)
        {
            Detach(entry);
        }

        return all;
    }

    private LinkedList<TEntry> ListOf(TEntry e) => _lru[e.Owned ? 1 : 0][e.Large ? 1 : 0];
}
