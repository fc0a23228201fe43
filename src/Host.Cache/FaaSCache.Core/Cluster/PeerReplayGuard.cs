using System.Collections.Concurrent;

namespace FaaSCache.Cluster;

/// <summary>
/// Remembers the nonces of accepted tokens until they expire (a token is only accepted within the clock skew of its
/// time), so a captured token is accepted once only. About 50 bytes per call for twice the allowed skew: at the
/// default 30 s, 1,000 calls a second cost 3 MB.
/// </summary>
public sealed class PeerReplayGuard
{
    private const int PruneEvery = 4096;
    private readonly ConcurrentDictionary<UInt128, long> _seen = new();
    private long _addedSincePrune;
    private long _nextPruneTicks;
    private int _pruning;

    /// <summary>Gets the number of nonces remembered.</summary>
    public int Count => _seen.Count;

    /// <summary>True the first time <paramref name="nonce"/> is seen (before <paramref name="expires"/>); false for a replay.</summary>
    public bool TryAccept(UInt128 nonce, DateTimeOffset expires, DateTimeOffset now)
    {
        if (!_seen.TryAdd(nonce, expires.UtcTicks))
        {
            return false;
        }

        if (Interlocked.Increment(ref _addedSincePrune) >= PruneEvery || now.UtcTicks >= Interlocked.Read(ref _nextPruneTicks))
        {
            Prune(now.UtcTicks);
        }

        return true;
    }

    private void Prune(long nowTicks)
    {
        if (Interlocked.Exchange(ref _pruning, 1) != 0)
        {
            return;
        }

        try
        {
            Interlocked.Exchange(ref _addedSincePrune, 0);
            Interlocked.Exchange(ref _nextPruneTicks, nowTicks + TimeSpan.TicksPerSecond * 10);
            foreach (KeyValuePair<UInt128, long> entry in _seen)
            {
                if (entry.Value < nowTicks)
                {
                    _seen.TryRemove(entry);
                }
            }
        }
        finally
        {
            Volatile.Write(ref _pruning, 0);
        }
    }
}
