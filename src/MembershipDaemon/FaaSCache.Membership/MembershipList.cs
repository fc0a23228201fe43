namespace FaaSCache.Membership;

/// <summary>
/// The content of an app's membership blob: its live instances, sorted by id (ordinal), ids unique.
/// Immutable; the <c>With*</c> methods return new lists.
/// </summary>
public sealed record MembershipList
{
    /// <summary>The schema this version writes; a blob with a higher schema is refused rather than misread.</summary>
    public const int CurrentSchema = 1;

    private readonly MemberInfo[] _members;

    /// <summary>Creates a list of <paramref name="members"/> (any order).</summary>
    /// <exception cref="ArgumentException">Two members have the same id, or a member is null.</exception>
    [JsonConstructor]
    public MembershipList(IReadOnlyList<MemberInfo> members)
    {
        ArgumentNullException.ThrowIfNull(members);
        var sorted = members.ToArray();
        if (Array.IndexOf(sorted, null) >= 0)
        {
            throw new ArgumentException("A membership list cannot contain null members.", nameof(members));
        }

        Array.Sort(sorted, static (a, b) => string.CompareOrdinal(a.Id, b.Id));
        for (int i = 1; i < sorted.Length; i++)
        {
            if (string.Equals(sorted[i].Id, sorted[i - 1].Id, StringComparison.Ordinal))
            {
                throw new ArgumentException($"Member '{sorted[i].Id}' is listed more than once.", nameof(members));
            }
        }

        _members = sorted;
    }

    /// <summary>Gets the list with no members.</summary>
    public static MembershipList Empty { get; } = new([]);

    /// <summary>Gets the schema number of the serialized form.</summary>
    public int Schema { get; init; } = CurrentSchema;

    /// <summary>Gets the members in ordinal id order.</summary>
    public IReadOnlyList<MemberInfo> Members => _members;

    /// <summary>Gets the member ids in ordinal order.</summary>
    [JsonIgnore]
    public IReadOnlyList<string> Ids => [.. _members.Select(m => m.Id)];

    /// <summary>Gets the number of members.</summary>
    [JsonIgnore]
    public int Count => _members.Length;

    /// <summary>The entry of <paramref name="id"/>, or null.</summary>
    public MemberInfo? Find(string id)
    {
        int index = IndexOf(id);
        return index >= 0 ? _members[index] : null;
    }

    /// <summary>True when <paramref name="id"/> is listed.</summary>
    public bool Contains(string id) => IndexOf(id) >= 0;

    /// <summary>A list with <paramref name="member"/> added, or replacing the entry with its id.</summary>
    public MembershipList WithMember(MemberInfo member)
    {
        ArgumentNullException.ThrowIfNull(member);
        return new MembershipList([.. _members.Where(m => !string.Equals(m.Id, member.Id, StringComparison.Ordinal)), member]) { Schema = Schema };
    }

    /// <summary>A list without <paramref name="id"/> (this list when it is not listed).</summary>
    public MembershipList WithoutMember(string id)
        => Contains(id)
            ? new MembershipList([.. _members.Where(m => !string.Equals(m.Id, id, StringComparison.Ordinal))]) { Schema = Schema }
            : this;

    /// <summary>The members whose heartbeat is older than <paramref name="failureTimeout"/> at <paramref name="now"/>.</summary>
    public IReadOnlyList<MemberInfo> StaleMembers(DateTimeOffset now, TimeSpan failureTimeout)
        => [.. _members.Where(m => m.IsStale(now, failureTimeout))];

    /// <summary>A list without the members whose heartbeat is older than <paramref name="failureTimeout"/> (this list when none is).</summary>
    public MembershipList WithoutStale(DateTimeOffset now, TimeSpan failureTimeout)
        => _members.Any(m => m.IsStale(now, failureTimeout))
            ? new MembershipList([.. _members.Where(m => !m.IsStale(now, failureTimeout))]) { Schema = Schema }
            : this;

    /// <inheritdoc />
    public bool Equals(MembershipList? other)
        => other is not null && Schema == other.Schema && _members.AsSpan().SequenceEqual(other._members);

    /// <inheritdoc />
    public override int GetHashCode()
    {
        var hash = new HashCode();
        hash.Add(Schema);
        foreach (var member in _members)
        {
            hash.Add(member);
        }

        return hash.ToHashCode();
    }

    private int IndexOf(string id)
    {
        ArgumentNullException.ThrowIfNull(id);
        int lo = 0;
        int hi = _members.Length - 1;
        while (lo <= hi)
        {
            int mid = lo + ((hi - lo) >> 1);
            int c = string.CompareOrdinal(_members[mid].Id, id);
            if (c == 0)
            {
                return mid;
            }

            if (c < 0)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }

        return -1;
    }
}
