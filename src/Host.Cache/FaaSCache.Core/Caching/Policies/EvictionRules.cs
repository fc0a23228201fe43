namespace FaaSCache.Caching.Policies;

/// <summary>
/// The pure decisions of §3.4 (admission by capacity, large/small by the size threshold, TTL expiry, victim order),
/// shared by the <see cref="Cachelet"/> and the simulator so that both run the same policy code.
/// </summary>
/// <remarks>
/// Callers keep four least-recently-used-first lists (owned or not, large or not) and ask
/// <see cref="PolicyOrder{T}"/> for the order in which their entries are evicted; expired entries go before that order.
/// </remarks>
public static class EvictionRules
{
    /// <summary>Whether an object of <paramref name="size"/> bytes may be cached at all under <paramref name="capacityBytes"/>.</summary>
    /// <param name="size">The object's size in bytes.</param>
    /// <param name="capacityBytes">The cache capacity in bytes.</param>
    /// <returns>False when the object is bigger than the whole cache.</returns>
    public static bool Admits(long size, long capacityBytes) => size <= capacityBytes;

    /// <summary>Whether an object counts as large for the size policy (above <see cref="EvictionOptions.SizeThresholdBytes"/>).</summary>
    /// <param name="options">The eviction settings.</param>
    /// <param name="size">The object's size in bytes.</param>
    /// <returns>True when the object is large.</returns>
    public static bool IsLarge(EvictionOptions options, long size)
    {
        ArgumentNullException.ThrowIfNull(options);
        return size > options.SizeThresholdBytes;
    }

    /// <summary>When an object cached at <paramref name="cachedAt"/> expires; null without a TTL.</summary>
    /// <param name="options">The eviction settings.</param>
    /// <param name="cachedAt">When the object entered the cache.</param>
    /// <returns>The expiry time, or null.</returns>
    public static DateTimeOffset? ExpiresAt(EvictionOptions options, DateTimeOffset cachedAt)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.Ttl is TimeSpan ttl ? cachedAt + ttl : null;
    }

    /// <summary>Whether an object with expiry <paramref name="expiresAt"/> has expired at <paramref name="now"/>.</summary>
    /// <param name="expiresAt">The object's expiry, or null when it never expires.</param>
    /// <param name="now">The current time.</param>
    /// <returns>True once the expiry time is reached.</returns>
    public static bool IsExpired(DateTimeOffset? expiresAt, DateTimeOffset now) => expiresAt is { } at && now >= at;

    /// <summary>
    /// Entries in the policy's eviction order. <c>lru</c>: least recently used among objects this cachelet does not own,
    /// then among owned ones. <c>size</c>: non-owned large, non-owned small, owned large, then owned small (LRU within each).
    /// </summary>
    /// <typeparam name="T">The caller's entry type.</typeparam>
    /// <param name="options">The eviction settings.</param>
    /// <param name="notOwnedSmall">Non-owned small entries, least recently used first.</param>
    /// <param name="notOwnedLarge">Non-owned large entries, least recently used first.</param>
    /// <param name="ownedSmall">Owned small entries, least recently used first.</param>
    /// <param name="ownedLarge">Owned large entries, least recently used first.</param>
    /// <param name="lastTouch">An entry's last-touch stamp (a monotonic counter), to merge lists in LRU order.</param>
    /// <returns>The entries, first victim first.</returns>
    public static IEnumerable<T> PolicyOrder<T>(
        EvictionOptions options,
        LinkedList<T> notOwnedSmall,
        LinkedList<T> notOwnedLarge,
        LinkedList<T> ownedSmall,
        LinkedList<T> ownedLarge,
        Func<T, long> lastTouch)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.Policy == EvictionPolicy.Size
            ? notOwnedLarge.Concat(notOwnedSmall).Concat(ownedLarge).Concat(ownedSmall)
            : MergeByLastTouch(notOwnedSmall, notOwnedLarge, lastTouch).Concat(MergeByLastTouch(ownedSmall, ownedLarge, lastTouch));
    }

    private static IEnumerable<T> MergeByLastTouch<T>(LinkedList<T> a, LinkedList<T> b, Func<T, long> lastTouch)
    {
        LinkedListNode<T>? x = a.First, y = b.First;
        while (x is not null || y is not null)
        {
            if (y is null || (x is not null && lastTouch(x.Value) <= lastTouch(y.Value)))
            {
                yield return x!.Value;
                x = x.Next;
            }
            else
            {
                yield return y.Value;
                y = y.Next;
            }
        }
    }

    /// <summary>
    /// Entries in eviction order over the four LRU lists <c>[owned][large]</c>: expired ones first (when a TTL is set),
    /// then by <see cref="PolicyOrder{T}"/>; never one that <paramref name="evictable"/> refuses (in use, not yet persisted).
    /// </summary>
    /// <typeparam name="T">The caller's entry type.</typeparam>
    /// <param name="options">The eviction settings.</param>
    /// <param name="lists">The lists, <c>[owned ? 1 : 0][large ? 1 : 0]</c>, each least recently used first.</param>
    /// <param name="lastTouch">An entry's last-touch stamp.</param>
    /// <param name="isExpired">Whether an entry's TTL has run out.</param>
    /// <param name="evictable">Whether an entry may go at all.</param>
    /// <returns>The entries, first victim first.</returns>
    public static IEnumerable<T> VictimOrder<T>(EvictionOptions options, LinkedList<T>[][] lists, Func<T, long> lastTouch, Func<T, bool> isExpired, Func<T, bool> evictable)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(lists);
        HashSet<T>? expired = null;
        if (options.Ttl is not null)
        {
            foreach (T e in lists.SelectMany(byOwner => byOwner).SelectMany(list => list).Where(e => evictable(e) && isExpired(e)))
            {
                (expired ??= []).Add(e);
                yield return e;
            }
        }

        foreach (T e in PolicyOrder(options, lists[0][0], lists[0][1], lists[1][0], lists[1][1], lastTouch))
        {
            if (evictable(e) && (expired is null || !expired.Contains(e)))
            {
                yield return e;
            }
        }
    }

    /// <summary>
    /// The victims, in <paramref name="order"/>, that free at least <paramref name="excess"/> bytes; null when all of them
    /// together would not (then nothing is to be evicted: the object is not cached).
    /// </summary>
    /// <typeparam name="T">The caller's entry type.</typeparam>
    /// <param name="order">Entries in eviction order (<see cref="VictimOrder{T}"/>).</param>
    /// <param name="excess">The bytes to free.</param>
    /// <param name="size">An entry's size.</param>
    /// <returns>The victims, or null.</returns>
    public static List<T>? PickVictims<T>(IEnumerable<T> order, long excess, Func<T, long> size)
    {
        ArgumentNullException.ThrowIfNull(order);
        var victims = new List<T>();
        foreach (T victim in order)
        {
            if (excess <= 0)
            {
                break;
            }

            victims.Add(victim);
            excess -= size(victim);
        }

        return excess > 0 ? null : victims;
    }
}
