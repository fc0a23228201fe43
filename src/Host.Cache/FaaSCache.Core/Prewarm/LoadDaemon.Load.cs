namespace FaaSCache.Prewarm;

/// <summary>§3.3: the load at start, which yields to invocations.</summary>
public sealed partial class LoadDaemon
{
    /// <summary>
    /// Runs the load once: read the snapshots, select, load the owned candidates. Every step waits until no invocation
    /// executes, and an invocation that starts cancels the download under way (it is retried afterwards), so a
    /// cold-start invocation's own inputs load first. Returns the final status (also <see cref="Completion"/>).
    /// </summary>
    /// <param name="cancellationToken">Stops the load (host shutdown).</param>
    /// <returns>The status when done.</returns>
    public async Task<LoadDaemonStatus> RunAsync(CancellationToken cancellationToken = default)
    {
        lock (_gate)
        {
            if (_startedAt != 0)
            {
                throw new InvalidOperationException("The Load Daemon runs once per instance lifetime.");
            }

            _startedAt = _time.GetTimestamp();
            _startedUtc = _time.GetUtcNow();
            _yield = new InvocationYield(_invocations);
        }

        if (!Options.Enabled)
        {
            LogOff();
            return Finish("off");
        }

        try
        {
            IReadOnlyList<PrewarmCandidate> mine = await SelectAsync(cancellationToken).ConfigureAwait(false);
            foreach (PrewarmCandidate candidate in mine)
            {
                await LoadAsync(candidate, cancellationToken).ConfigureAwait(false);
            }

            LoadDaemonStatus done = Finish("done");
            LogDone(done.Loaded, done.BytesLoaded, done.Owned, done.AlreadyCached, done.SkippedNoRoom, done.SkippedChanged, done.SkippedMissing, done.Failed, done.Pauses, done.Elapsed.TotalMilliseconds);
            return done;
        }
        catch (Exception e) when (e is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
        {
            LogFailed(e.Message);
            _completion.TrySetResult(Finish("failed"));
            return Status();
        }
    }

    private async Task<IReadOnlyList<PrewarmCandidate>> SelectAsync(CancellationToken cancellationToken)
    {
        await WaitForHandOffsAsync(cancellationToken).ConfigureAwait(false);
        SnapshotListing listing = await WhileIdleAsync(
            token => _snapshots.ReadAsync(_time.GetUtcNow() - PrewarmSelector.MaxLookBack, MaxSnapshots, token), cancellationToken).ConfigureAwait(false);
        DateTimeOffset now = _time.GetUtcNow();
        double perHour = UnloadSnapshots.EstimateInvocationsPerHour(listing.Snapshots);
        TimeSpan lookBack = PrewarmSelector.LookBackWindow(perHour);
        IReadOnlyList<PrewarmCandidate> all = PrewarmSelector.Select(listing.Snapshots, now, lookBack, Options.HitRateThreshold);
        List<PrewarmCandidate> mine = [.. all.Where(c => _owners.IsLocalOwner(c.Key))];
        int inWindow = listing.Snapshots.Count(s => s.TakenAt >= now - lookBack);
        lock (_gate)
        {
            _snapshotsRead = inWindow;
            _snapshotsSkipped = listing.Skipped;
            _perHour = perHour;
            _lookBack = lookBack;
            _candidates = all.Count;
            _owned = mine.Count;
            _state = "loading";
        }

        _metrics.Snapshots("read", inWindow);
        _metrics.Snapshots("skipped", listing.Skipped);
        LogSelected(inWindow, listing.Skipped, perHour, lookBack.TotalHours, all.Count, Options.HitRateThreshold, mine.Count, _owners.Current.Members.Count, mine.Sum(c => c.SizeBytes));

        // Older snapshots than any window can reach are of no further use: keep the folder bounded.
        _ = await WhileIdleAsync(token => _snapshots.PruneAsync(now - PrewarmSelector.MaxLookBack, token), cancellationToken).ConfigureAwait(false);
        return mine;
    }

    private async Task LoadAsync(PrewarmCandidate candidate, CancellationToken cancellationToken)
    {
        if (!_owners.IsLocalOwner(candidate.Key))
        {
            // The ring changed since the selection: the new owner loads it.
            return;
        }

        if (_cache.BytesCached + candidate.SizeBytes > _cache.CapacityBytes)
        {
            Count(ref _noRoom, "no_room");
            LogSkipped(candidate.Key, "it does not fit in the free capacity");
            return;
        }

        try
        {
            (PrewarmLoadResult result, string? changedTo) = await WhileIdleAsync(token => LoadCurrentAsync(candidate, token), cancellationToken).ConfigureAwait(false);
            if (changedTo is not null)
            {
                Count(ref _changed, "changed");
                LogSkipped(candidate.Key, $"storage holds version {changedTo} now, not the snapshot's {candidate.Version}, and the {_cache.Options.Consistency} preset reads storage's version");
                return;
            }

            switch (result.Outcome)
            {
                case PrewarmLoadOutcome.Loaded:
                    lock (_gate)
                    {
                        _loaded++;
                        _bytesLoaded += result.Bytes;
                        if (_loadedKeys.Count < MaxLoadedKeysShown)
                        {
                            _loadedKeys.Add(candidate.Key);
                        }
                    }

                    _metrics.Loaded(result.Bytes);
                    LogLoaded(candidate.Key, result.Bytes, result.Version ?? "?", candidate.Accesses, candidate.HitRate, candidate.ExpectedBenefit);
                    break;
                case PrewarmLoadOutcome.AlreadyCached:
                    Count(ref _alreadyCached, "cached");
                    break;
                case PrewarmLoadOutcome.NoRoom:
                    Count(ref _noRoom, "no_room");
                    LogSkipped(candidate.Key, "it does not fit in the free capacity");
                    break;
                case PrewarmLoadOutcome.NotFound or PrewarmLoadOutcome.Excluded:
                    Count(ref _missing, "missing");
                    LogSkipped(candidate.Key, result.Outcome == PrewarmLoadOutcome.NotFound ? "it is no longer in storage" : "it matches doNotCache");
                    break;
                default:
                    break;
            }
        }
        catch (Exception e) when (e is not OperationCanceledException && e is not ObjectDisposedException)
        {
            Count(ref _failed, "failed");
            LogSkipped(candidate.Key, "loading it failed: " + e.Message);
        }
    }

    /// <summary>
    /// Loads the current version; under a preset that reads storage's version, only if it is still the snapshot's
    /// (otherwise nothing is loaded and the version storage holds is returned).
    /// </summary>
    private async Task<(PrewarmLoadResult Result, string? ChangedTo)> LoadCurrentAsync(PrewarmCandidate candidate, CancellationToken token)
    {
        if (SkipsChangedVersions && candidate.Version is { } snapshotVersion && !_cache.Contains(candidate.Key))
        {
            string? current = await _cache.Storage.GetVersionAsync(candidate.Key, token).ConfigureAwait(false);
            if (current is null)
            {
                return (new PrewarmLoadResult(PrewarmLoadOutcome.NotFound), null);
            }

            if (current != snapshotVersion)
            {
                return (default, current);
            }
        }

        return (await _cache.PrewarmAsync(candidate.Key, token).ConfigureAwait(false), null);
    }

    /// <summary>
    /// Runs <paramref name="work"/> while no invocation executes: waits for idle, and when an invocation starts
    /// mid-way (its token is cancelled), waits for idle again and starts the work afresh.
    /// </summary>
    private async Task<T> WhileIdleAsync<T>(Func<CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        InvocationYield yielding = _yield!;
        while (true)
        {
            Task<CancellationToken> idle = yielding.WaitForIdleAsync(cancellationToken);
            if (!idle.IsCompleted)
            {
                string resume;
                lock (_gate)
                {
                    resume = _state;
                    _state = "paused";
                    _pauses++;
                }

                _metrics.Paused();
                LogPaused();
                Paused?.Invoke(this, EventArgs.Empty);
                await idle.ConfigureAwait(false);
                SetState(resume);
                continue;
            }

            CancellationToken busy = await idle.ConfigureAwait(false);
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(busy, cancellationToken);
            try
            {
                return await work(linked.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (busy.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                // An invocation started: it goes first; this work starts again once none executes.
            }
        }
    }

    private LoadDaemonStatus Finish(string state)
    {
        lock (_gate)
        {
            _state = state;
            _elapsedTicks = Math.Max(1, _time.GetElapsedTime(_startedAt).Ticks);
            // Done: later invocations are none of the daemon's business.
            _yield?.Dispose();
        }

        LoadDaemonStatus status = Status();
        _completion.TrySetResult(status);
        return status;
    }

    private void Count(ref int counter, string reason)
    {
        lock (_gate)
        {
            counter++;
        }

        _metrics.Skipped(reason);
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Pre-warm is off (prewarm.enabled is false): no load at start, no snapshot at unload")]
    private partial void LogOff();

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon: {Snapshots} snapshot(s) in the look-back window ({Skipped} unreadable skipped), ~{PerHour:0.##} invocation(s)/h -> look back {Hours:0.##} h; {Candidates} object(s) selected (hit rate > {Threshold} or accessed more than once), {Owned} owned here among {Members} member(s), {Bytes} bytes")]
    private partial void LogSelected(int snapshots, int skipped, double perHour, double hours, int candidates, double threshold, int owned, int members, long bytes);

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon loaded {Key}: {Bytes} bytes, version {Version} ({Accesses} access(es), hit rate {HitRate:0.##}, benefit {Benefit:0.###} s)")]
    private partial void LogLoaded(string key, long bytes, string version, long accesses, double hitRate, double benefit);

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon skipped {Key}: {Reason}")]
    private partial void LogSkipped(string key, string reason);

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon paused: an invocation is executing (its inputs load first)")]
    private partial void LogPaused();

    [LoggerMessage(Level = LogLevel.Information, Message = "Load Daemon done: {Loaded} object(s), {Bytes} bytes loaded of {Owned} owned; {Cached} already cached, {NoRoom} without room, {Changed} changed, {Missing} missing, {Failed} failed; {Pauses} pause(s) for invocations; {Ms:0} ms")]
    private partial void LogDone(int loaded, long bytes, int owned, int cached, int noRoom, int changed, int missing, int failed, long pauses, double ms);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Load Daemon failed (the cache starts empty; invocations are not affected): {Error}")]
    private partial void LogFailed(string error);
}
