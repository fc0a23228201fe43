namespace FaaSCache.Caching;

/// <summary>
/// §3.2, copies dropped: a write committed here tells the other members to drop older copies; a member told so drops its
/// own; a write storage took without the cache (the SDK endpoint's forwarded writes and deletes) drops every copy. Reads in
/// flight when a copy was dropped do not cache what they fetched before it (<see cref="CacheletCore.MarkInvalidatedLocked"/>).
/// </summary>
internal sealed class Invalidations(CacheletCore core)
{
    /// <summary>The version an invalidation names for a blob that no longer exists: no copy has it, so every copy goes.</summary>
    private const string DeletedVersion = "(deleted)";

    /// <summary>
    /// Storage took a write of <paramref name="key"/> that did not go through the cache (its new ETag
    /// <paramref name="version"/>; null for a delete or when storage did not say): drops this cachelet's copy and, under
    /// the presets whose writes invalidate other copies, has every other member drop a copy of another version, with the
    /// invalidation message the owner sends after a cache write. Unlike a cache write, no owner holds the new version
    /// here, and the owner serves its own copy without asking anyone: so this returns once every member answered (at
    /// most the settle period; a member that does not answer is the membership's to remove).
    /// </summary>
    public async Task InvalidateEverywhereAsync(string key, string? version, CancellationToken cancellationToken)
    {
        string current = string.IsNullOrEmpty(version) ? DeletedVersion : version;
        var dead = new List<CacheEntry>();
        lock (core.Gate)
        {
            if (core.Entries.TryGetValue(key, out CacheEntry? entry) && !entry.Dirty)
            {
                core.DetachLocked(entry, dead);
            }

            core.MarkInvalidatedLocked(key, current);
        }

        core.DeleteMaps(dead);
        try
        {
            await Broadcast(key, current).WaitAsync(core.Trust.SettlePeriod, core.Time, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            core.Logger.LogWarning("Invalidating {Key} on the other members took longer than {Period}; a member that did not answer may serve its copy until it is removed", key, core.Trust.SettlePeriod);
        }
    }

    /// <summary>Another member committed <paramref name="version"/>: drops this cachelet's copy of another version.</summary>
    public bool Drop(string key, string version)
    {
        var dead = new List<CacheEntry>();
        bool dropped;
        lock (core.Gate)
        {
            dropped = core.Entries.TryGetValue(key, out CacheEntry? entry) && entry.Version != version && !entry.Dirty;
            if (dropped)
            {
                core.DetachLocked(entry!, dead);
            }

            // A read here that began before it may be bringing in the older version: it must not cache it.
            core.MarkInvalidatedLocked(key, version);
        }

        core.DeleteMaps(dead);
        if (dropped)
        {
            core.Metrics.Invalidated();
        }

        return dropped;
    }

    /// <summary>
    /// While views may differ (unsettled), another member may still serve its copy of <paramref name="key"/> as the owner:
    /// the write is acknowledged only once the others were told to drop older copies (bounded by the settle period; a
    /// member that does not answer is the membership's to remove). Settled, the invalidation stays best effort.
    /// </summary>
    public async Task InvalidateOthersAsync(string key, string version)
    {
        Task sent = Broadcast(key, version);
        if (!core.RevalidatesAfterChanges || !core.Unsettled)
        {
            return;
        }

        try
        {
            await sent.WaitAsync(core.Trust.SettlePeriod, core.Time).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            core.Logger.LogDebug("Invalidating {Key} on the other members took longer than {Period}; acknowledged anyway", key, core.Trust.SettlePeriod);
        }
    }

    /// <summary>After the owner committed a write under strong/owner presets: other members drop older copies (best effort; the task ends when all answered).</summary>
    private Task Broadcast(string key, string version)
    {
        if (core.Peers is null || !core.Policy.InvalidatesOtherCopies)
        {
            return Task.CompletedTask;
        }

        return Task.WhenAll(core.Owners.Others().Select(member => InvalidateMemberAsync(member, key, version)));
    }

    private async Task InvalidateMemberAsync(string member, string key, string version)
    {
        try
        {
            await core.Peers!.InvalidateAsync(member, key, version).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            core.Logger.LogDebug(e, "Invalidating {Key} on {Member} failed", key, member);
        }
    }
}
