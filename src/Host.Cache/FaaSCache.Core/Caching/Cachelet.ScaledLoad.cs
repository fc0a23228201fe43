using FaaSCache.Scaling;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Caching;

/// <summary>§4, bandwidth scaling: a storage download either runs alone or is shared out by the planner.</summary>
public sealed partial class Cachelet
{
    private readonly BandwidthScaler? _bandwidth;

    /// <summary>Gets the bandwidth scaler, when bandwidth scaling is on.</summary>
    public BandwidthScaler? Bandwidth => _bandwidth;

    /// <summary>
    /// Receives a body from storage: alone, or, when the planner finds that N instances download it faster, as a scaled
    /// load whose requester reads only its share of this response. Either way the transfer is a profile sample.
    /// </summary>
    private async Task<Received> ReceiveFromStorageAsync(string key, string etag, long length, Stream content, bool cache, long started, CancellationToken cancellationToken)
    {
        long firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
        TimeSpan latency = System.Diagnostics.Stopwatch.GetElapsedTime(started, firstByte);
        if (PlanScaledLoad(length) is { } plan)
        {
            return await ReceiveScaledAsync(key, etag, length, content, cache, latency, plan, cancellationToken).ConfigureAwait(false);
        }

        Received received = await ReceiveAsync(length, content, cache, cancellationToken, publishVersion: etag).ConfigureAwait(false);
        _bandwidth?.Profiler.RecordStorage(length, latency, System.Diagnostics.Stopwatch.GetElapsedTime(firstByte));
        return received;
    }

    /// <summary>
    /// One storage GET into a map; when a scaled load finds that the blob was overwritten mid-way (a helper's If-Match
    /// range refused), nothing of either version is kept and the GET starts again for the new version.
    /// </summary>
    private async Task<FetchResult<Received>> FetchFromStorageAsync(string key, string? ifNoneMatch, bool cache, CancellationToken cancellationToken)
    {
        const int Attempts = 3;
        for (int attempt = 1; ; attempt++)
        {
            long started = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                return await _storage.FetchAsync(key, ifNoneMatch, (length, etag, content, token) => ReceiveFromStorageAsync(key, etag, length, content, cache, started, token), cancellationToken)
                    .ConfigureAwait(false);
            }
            catch (BlobVersionChangedException e) when (attempt < Attempts)
            {
                _logger.LogInformation("{Key} changed while it was being loaded ({Reason}); loading the new version (attempt {Attempt} of {Attempts})", key, e.Message, attempt + 1, Attempts);
            }
        }
    }

    private BandwidthPlan? PlanScaledLoad(long length)
    {
        if (_bandwidth is null || _peers is null || !_options.Scaling.Bandwidth || length < 2 * ScaledLoad.MinShareBytes || length > int.MaxValue)
        {
            return null;
        }

        BandwidthPlan plan = _bandwidth.Plan(length, _owners.Current.Members.Count);
        return plan.Instances > 1 ? plan : null;
    }

    private async Task<Received> ReceiveScaledAsync(string key, string etag, long length, Stream content, bool cache, TimeSpan latency, BandwidthPlan plan, CancellationToken cancellationToken)
    {
        bool reserved = false;
        if (cache)
        {
            var dead = new List<CacheEntry>();
            lock (_gate)
            {
                reserved = TryReserveLocked(length, dead);
            }

            DeleteMaps(dead);
        }

        SharedMemoryMap? map = null;
        Task prefault = Task.CompletedTask;
        try
        {
            map = _shm.Create(length);
            reserved = KeepReservation(map, reserved);
            prefault = map.PrefaultAsync();
            long started = System.Diagnostics.Stopwatch.GetTimestamp();
            var load = new ScaledLoad(_peers!, _storage, _owners, _bandwidth!, Metrics, _logger, key, etag, map, plan.Instances, cancellationToken);
            try
            {
                await load.RunAsync(content, plan.Reason).ConfigureAwait(false);
            }
            finally
            {
                await prefault.ConfigureAwait(false);
            }

            TimeSpan elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
            // Only the first-byte latency is a sample here: the requester's share arrives while N-1 helper streams compete
            // for the same CPUs, so its rate is not one instance's BW_BS (the benchmark saw it fall to a third, and each
            // split then lowered the next sample further).
            _bandwidth!.Profiler.RecordStorage(0, latency, TimeSpan.Zero);
            // Counted where the bytes came from: a helper's range taken back came from storage, not from a peer.
            Metrics.Fetched(load.OwnBytes + load.TakenBackBytes);
            Metrics.FromPeer(load.PeerBytes);
            Metrics.ScaledLoad(load.Used);
            _bandwidth.Record(new ScaledLoadRecord(_time.GetUtcNow(), key, length, plan.Instances, load.Used, load.TakenBack, elapsed, load.Checksum, plan.Reason));
            _logger.LogInformation(
                "Scaled load of {Key}: {Bytes} B by {Used} instance(s) (planned {Planned}) in {Seconds:0.000} s, {TakenBack} range(s) taken back, checked by {Checksum}; {Reason}",
                key, length, load.Used, plan.Instances, elapsed.TotalSeconds, load.TakenBack, load.Checksum, plan.Reason);
            return new Received(map, reserved, length);
        }
        catch
        {
            if (reserved)
            {
                lock (_gate)
                {
                    UnreserveLocked(length);
                }
            }

            if (map is not null)
            {
                _shm.Delete(map);
            }

            throw;
        }
    }
}
