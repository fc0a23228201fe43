namespace FaaSCache.Membership;

/// <summary>The live member list changed: someone joined, left or failed, or a member's endpoint changed.</summary>
public sealed class MembersChangedEventArgs : EventArgs
{
    /// <summary>Creates the event data for a change from <paramref name="previous"/> to <paramref name="current"/>.</summary>
    public MembersChangedEventArgs(IReadOnlyList<MemberInfo> previous, IReadOnlyList<MemberInfo> current)
    {
        ArgumentNullException.ThrowIfNull(previous);
        ArgumentNullException.ThrowIfNull(current);
        Previous = previous;
        Current = current;
        var before = previous.Select(m => m.Id).ToHashSet(StringComparer.Ordinal);
        var after = current.Select(m => m.Id).ToHashSet(StringComparer.Ordinal);
        Joined = [.. current.Where(m => !before.Contains(m.Id))];
        Left = [.. previous.Where(m => !after.Contains(m.Id))];
    }

    /// <summary>Gets the members before the change (ordinal id order).</summary>
    public IReadOnlyList<MemberInfo> Previous { get; }

    /// <summary>Gets the members after the change (ordinal id order).</summary>
    public IReadOnlyList<MemberInfo> Current { get; }

    /// <summary>Gets the members in <see cref="Current"/> but not in <see cref="Previous"/>.</summary>
    public IReadOnlyList<MemberInfo> Joined { get; }

    /// <summary>Gets the members in <see cref="Previous"/> but not in <see cref="Current"/> (left or failed).</summary>
    public IReadOnlyList<MemberInfo> Left { get; }
}
