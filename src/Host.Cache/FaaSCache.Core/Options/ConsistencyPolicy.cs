namespace FaaSCache.Options;

/// <summary>Where a read of a cached copy looks to decide that the copy is current.</summary>
public enum ReadTarget
{
    /// <summary>Storage's version (one conditional request): the copy serves only if storage still holds it.</summary>
    StorageVersion,

    /// <summary>The key's owner (one version query): a non-owner's copy serves only if the owner holds the same version.</summary>
    Owner,

    /// <summary>Any local copy serves as it is.</summary>
    Local,
}

/// <summary>Which cachelet a write goes to.</summary>
public enum WriteTarget
{
    /// <summary>The key's owner (a non-owner forwards the write).</summary>
    Owner,

    /// <summary>The cachelet of the instance that wrote it.</summary>
    Local,
}

/// <summary>
/// What one consistency preset of the paper's Table 3 means: the single definition that every read and write path
/// consults (and that the README's preset table is checked against).
/// </summary>
/// <param name="Preset">The preset.</param>
/// <param name="WriteTarget">Where writes go.</param>
/// <param name="DefaultPersist">The persistence used when host.json sets none.</param>
/// <param name="ReadTarget">What a read of a cached copy checks.</param>
/// <param name="InvalidatesOtherCopies">Whether the owner tells the other members to drop older copies after a write.</param>
/// <param name="Guarantee">What a reader can count on, in the paper's words.</param>
public sealed record ConsistencyPolicy(
    ConsistencyPreset Preset,
    WriteTarget WriteTarget,
    PersistMode DefaultPersist,
    ReadTarget ReadTarget,
    bool InvalidatesOtherCopies,
    string Guarantee)
{
    /// <summary>The six presets, in <see cref="ConsistencyPreset"/> order.</summary>
    /// <remarks>
    /// <c>ownerLocalRead</c> does not invalidate: its reads serve any local copy by definition, so telling the other
    /// members to drop theirs would make it a slower <c>owner</c> without its guarantee; its writes still go through
    /// the owner, so the owner's copy (and storage, with sync persistence) is always the latest.
    /// </remarks>
    public static IReadOnlyList<ConsistencyPolicy> All { get; } =
    [
        new(ConsistencyPreset.Strong, WriteTarget.Owner, PersistMode.Sync, ReadTarget.StorageVersion, InvalidatesOtherCopies: true, "strong, highest fault tolerance"),
        new(ConsistencyPreset.Owner, WriteTarget.Owner, PersistMode.Sync, ReadTarget.Owner, InvalidatesOtherCopies: true, "strong while the owner lives"),
        new(ConsistencyPreset.OwnerAsync, WriteTarget.Owner, PersistMode.Async, ReadTarget.Owner, InvalidatesOtherCopies: true, "eventual"),
        new(ConsistencyPreset.OwnerLocalRead, WriteTarget.Owner, PersistMode.Sync, ReadTarget.Local, InvalidatesOtherCopies: false, "weak"),
        new(ConsistencyPreset.Local, WriteTarget.Local, PersistMode.Sync, ReadTarget.Local, InvalidatesOtherCopies: false, "none"),
        new(ConsistencyPreset.LocalAsync, WriteTarget.Local, PersistMode.Async, ReadTarget.Local, InvalidatesOtherCopies: false, "none"),
    ];

    /// <summary>
    /// Gets a value indicating whether host.json may set <c>persist</c> to something other than sync. A preset whose
    /// reads check storage's version needs its writes in storage before they return.
    /// </summary>
    public bool AllowsOnlySyncPersist => ReadTarget == ReadTarget.StorageVersion;

    /// <summary>The policy of <paramref name="preset"/>.</summary>
    public static ConsistencyPolicy For(ConsistencyPreset preset) => All[(int)preset];
}
