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

        Received received = await ReceiveAsync(length, content, cache, cancellationToken).ConfigureAwait(false);
        _bandwidth?.Profiler.RecordStorage(length, latency, System.Diagnostics.Stopwatch.GetElapsedTime(firstByte));
        return received;
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
            prefault = map.PrefaultAsync();
            long started = System.Diagnostics.Stopwatch.GetTimestamp();
            var load = new ScaledLoad(_peers!, _storage, _owners, _bandwidth!, Metrics, _logger, key, etag, map, plan.Instances, cancellationToken);
            try
            {
                await load.RunAsync(content, plan.Reason).ConfigureAwait(false);
            }
            catch (BlobVersionChangedException e)
            {
                // Transient for the caller's storage pipeline: it fetches the new version from the start.
                throw new IOException(e.Message, e);
            }
            finally
            {
                await prefault.ConfigureAwait(false);
            }

            TimeSpan elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
            _bandwidth!.Profiler.RecordStorage(load.OwnBytes, latency, load.OwnElapsed);
            Metrics.Fetched(load.OwnBytes);
            Metrics.FromPeer(length - load.OwnBytes);
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
