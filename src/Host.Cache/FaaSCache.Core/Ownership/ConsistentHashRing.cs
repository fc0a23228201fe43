using System.Collections.ObjectModel;

namespace FaaSCache.Ownership;

/// <summary>
/// An immutable SHA256 consistent-hash ring (§3.2: owners by consistent hashing).
/// </summary>
/// <remarks>
/// <para>
/// Each member gets <see cref="VirtualNodes"/> points on a 64-bit ring; point <c>i</c> of member
/// <c>m</c> is the first 8 bytes (big-endian) of SHA256 over the UTF-8 bytes of <c>"m#i"</c>.
/// A key hashes the same way (SHA256 of its UTF-8 bytes) and is owned by the first point at or
/// after its hash, wrapping round past the largest point to the smallest.
/// </para>
/// <para>
/// When two points coincide, the member whose id sorts first (ordinal) keeps the point, so every
/// ring built from the same member set answers the same, whatever order the ids arrived in.
/// </para>
/// <para>
/// Instances never change after construction and are safe to share between threads;
/// <see cref="WithMember"/> and <see cref="WithoutMember"/> return new rings.
/// Look-ups do not allocate (keys up to <see cref="StackKeyChars"/> chars are encoded on the
/// stack, longer ones in a pooled buffer).
/// </para>
/// </remarks>
public sealed class ConsistentHashRing
{
    /// <summary>The number of virtual nodes per member used when none is given (§3.2).</summary>
    public const int DefaultVirtualNodes = 100;

    /// <summary>Keys up to this many UTF-16 chars are UTF-8 encoded into a stack buffer.</summary>
    internal const int StackKeyChars = 128;

    private const int StackBytes = StackKeyChars * 3;

    private readonly string[] _members;
    private readonly ulong[] _points;
    private readonly int[] _pointOwners;

    /// <summary>An empty ring with <see cref="DefaultVirtualNodes"/> virtual nodes per member.</summary>
    public static ConsistentHashRing Empty { get; } = new([], DefaultVirtualNodes);

    /// <summary>Builds a ring over <paramref name="members"/>.</summary>
    /// <param name="members">Member ids (non-empty strings); duplicates are ignored, order does not matter.</param>
    /// <param name="virtualNodes">Points per member on the ring; at least 1.</param>
    /// <exception cref="ArgumentException">A member id is null or empty, or <paramref name="virtualNodes"/> is below 1.</exception>
    public ConsistentHashRing(IEnumerable<string> members, int virtualNodes = DefaultVirtualNodes)
        : this(members, virtualNodes, Sha256MemberPoints)
    {
    }

    /// <summary>
    /// Builds a ring whose member points come from <paramref name="memberPoints"/>
    /// (tests use this to force point collisions).
    /// </summary>
    internal ConsistentHashRing(
        IEnumerable<string> members,
        int virtualNodes,
        Func<string, int, ulong[]> memberPoints)
    {
        ArgumentNullException.ThrowIfNull(members);
        if (virtualNodes < 1)
        {
            throw new ArgumentOutOfRangeException(
                nameof(virtualNodes),
                virtualNodes,
                "The number of virtual nodes per member must be at least 1.");
        }

        var ids = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var id in members)
        {
            if (string.IsNullOrEmpty(id))
            {
                throw new ArgumentException("Member ids must be non-empty strings.", nameof(members));
            }

            ids.Add(id);
        }

        long total = (long)ids.Count * virtualNodes;
        if (total > Array.MaxLength)
        {
            throw new ArgumentOutOfRangeException(
                nameof(virtualNodes),
                virtualNodes,
                string.Create(
                    CultureInfo.InvariantCulture,
                    $"{ids.Count} members x {virtualNodes} virtual nodes exceeds the largest ring supported."));
        }

        _members = [.. ids];
        VirtualNodes = virtualNodes;
        Members = Array.AsReadOnly(_members);

        // Member index order is ordinal id order, so sorting by (point, index) and keeping the
        // first entry of each run of equal points gives a collided point to the smallest id.
        var entries = new PointEntry[(int)total];
        int n = 0;
        for (int m = 0; m < _members.Length; m++)
        {
            ulong[] own = memberPoints(_members[m], virtualNodes);
            if (own.Length != virtualNodes)
            {
                throw new InvalidOperationException("The point function returned the wrong number of points.");
            }

            foreach (ulong p in own)
            {
                entries[n++] = new PointEntry(p, m);
            }
        }

        Array.Sort(entries);

        int distinct = 0;
        for (int i = 0; i < entries.Length; i++)
        {
            if (i == 0 || entries[i].Point != entries[i - 1].Point)
            {
                entries[distinct++] = entries[i];
            }
        }

        _points = new ulong[distinct];
        _pointOwners = new int[distinct];
        for (int i = 0; i < distinct; i++)
        {
            _points[i] = entries[i].Point;
            _pointOwners[i] = entries[i].Member;
        }
    }

    /// <summary>Gets the member ids, distinct and in ordinal order.</summary>
    public IReadOnlyList<string> Members { get; }

    /// <summary>Gets the number of points each member has on the ring.</summary>
    public int VirtualNodes { get; }

    /// <summary>Gets a value indicating whether the ring has no members.</summary>
    public bool IsEmpty => _members.Length == 0;

    /// <summary>Gets the number of distinct points on the ring.</summary>
    public int PointCount => _points.Length;

    /// <summary>True when <paramref name="memberId"/> is a member of this ring.</summary>
    public bool Contains(string memberId)
        => memberId is not null && Array.BinarySearch(_members, memberId, StringComparer.Ordinal) >= 0;

    /// <summary>Returns the id of the member that owns <paramref name="key"/>.</summary>
    /// <exception cref="InvalidOperationException">The ring has no members.</exception>
    public string GetOwner(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        ThrowIfEmpty();
        return _members[_pointOwners[FirstPointAtOrAfter(HashKey(key))]];
    }

    /// <summary>
    /// Returns up to <paramref name="count"/> distinct members met walking clockwise from
    /// <paramref name="key"/>'s hash: the owner first, then the successors that would hold replicas.
    /// Fewer are returned when the ring has fewer members.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative.</exception>
    /// <exception cref="InvalidOperationException">The ring has no members.</exception>
    public IReadOnlyList<string> GetOwners(string key, int count)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ThrowIfEmpty();

        int want = Math.Min(count, _members.Length);
        if (want == 0)
        {
            return [];
        }

        var result = new string[want];
        Span<bool> seen = _members.Length <= 256 ? stackalloc bool[_members.Length] : new bool[_members.Length];
        int found = 0;
        int index = FirstPointAtOrAfter(HashKey(key));
        for (int step = 0; step < _points.Length && found < want; step++)
        {
            int member = _pointOwners[index];
            if (!seen[member])
            {
                seen[member] = true;
                result[found++] = _members[member];
            }

            index = index + 1 == _points.Length ? 0 : index + 1;
        }

        if (found < want)
        {
            // Only possible when every point of some member collided with a smaller id's points.
            Array.Resize(ref result, found);
        }

        return result;
    }

    /// <summary>Returns a ring that also contains <paramref name="memberId"/> (this ring if it already does).</summary>
    public ConsistentHashRing WithMember(string memberId)
    {
        ArgumentException.ThrowIfNullOrEmpty(memberId);
        return Contains(memberId) ? this : new ConsistentHashRing(_members.Append(memberId), VirtualNodes);
    }

    /// <summary>Returns a ring without <paramref name="memberId"/> (this ring if it is not a member).</summary>
    public ConsistentHashRing WithoutMember(string memberId)
    {
        ArgumentException.ThrowIfNullOrEmpty(memberId);
        return Contains(memberId)
            ? new ConsistentHashRing(_members.Where(m => !string.Equals(m, memberId, StringComparison.Ordinal)), VirtualNodes)
            : this;
    }

    /// <summary>True when this ring has exactly the member ids in <paramref name="memberIds"/> (duplicates ignored).</summary>
    public bool HasSameMembers(IEnumerable<string> memberIds)
    {
        ArgumentNullException.ThrowIfNull(memberIds);
        var other = new HashSet<string>(memberIds, StringComparer.Ordinal);
        return other.Count == _members.Length && _members.All(other.Contains);
    }

    /// <inheritdoc />
    public override string ToString()
        => string.Create(
            CultureInfo.InvariantCulture,
            $"ConsistentHashRing({_members.Length} members, {VirtualNodes} virtual nodes, {_points.Length} points)");

    /// <summary>The ring position of <paramref name="key"/>: the first 8 bytes (big-endian) of SHA256(UTF-8 key).</summary>
    internal static ulong HashKey(ReadOnlySpan<char> key)
    {
        byte[]? rented = null;
        Span<byte> buffer = key.Length <= StackKeyChars
            ? stackalloc byte[StackBytes]
            : (rented = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetByteCount(key)));
        try
        {
            int length = Encoding.UTF8.GetBytes(key, buffer);
            return HashBytes(buffer[..length]);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private static ulong HashBytes(ReadOnlySpan<byte> bytes)
    {
        Span<byte> digest = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(bytes, digest);
        return BinaryPrimitives.ReadUInt64BigEndian(digest);
    }

    /// <summary>Points of <paramref name="memberId"/>: SHA256 of "memberId#i" for i in [0, count).</summary>
    private static ulong[] Sha256MemberPoints(string memberId, int count)
    {
        // UTF-8 of the id, then '#', then up to 10 digits of i.
        int prefix = Encoding.UTF8.GetByteCount(memberId) + 1;
        var buffer = new byte[prefix + 11];
        Encoding.UTF8.GetBytes(memberId, buffer);
        buffer[prefix - 1] = (byte)'#';

        var result = new ulong[count];
        for (int i = 0; i < count; i++)
        {
            if (!i.TryFormat(buffer.AsSpan(prefix), out int digits, default, CultureInfo.InvariantCulture))
            {
                throw new InvalidOperationException("Could not format a virtual node number.");
            }

            result[i] = HashBytes(buffer.AsSpan(0, prefix + digits));
        }

        return result;
    }

    private int FirstPointAtOrAfter(ulong hash)
    {
        int index = Array.BinarySearch(_points, hash);
        if (index < 0)
        {
            index = ~index;
        }

        return index == _points.Length ? 0 : index;
    }

    private void ThrowIfEmpty()
    {
        if (_points.Length == 0)
        {
            throw new InvalidOperationException(
                "The consistent-hash ring has no members, so no member can own a key; add a member first.");
        }
    }

    private readonly record struct PointEntry(ulong Point, int Member) : IComparable<PointEntry>
    {
        public int CompareTo(PointEntry other)
        {
            int byPoint = Point.CompareTo(other.Point);
            return byPoint != 0 ? byPoint : Member.CompareTo(other.Member);
        }
    }
}
