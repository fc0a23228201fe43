using System.Collections.Concurrent;

namespace FaaSCache.Peers;

/// <summary>Remembers the nonces of accepted tokens until they expire, so a captured token is accepted once only.</summary>
internal sealed class PeerReplayGuard
{
    private const int PruneThreshold = 4096;
    private readonly ConcurrentDictionary<string, long> _seen = new(StringComparer.Ordinal);
    private long _nextPruneTicks;

    /// <summary>Gets the number of nonces remembered.</summary>
    public int Count => _seen.Count;

    /// <summary>True the first time <paramref name="nonce"/> is seen (before <paramref name="expires"/>); false for a replay.</summary>
    public bool TryAccept(string nonce, DateTimeOffset expires, DateTimeOffset now)
    {
        PruneIfDue(now);
        return _seen.TryAdd(nonce, expires.UtcTicks);
    }

    private void PruneIfDue(DateTimeOffset now)
    {
        long nowTicks = now.UtcTicks;
        long due = Interlocked.Read(ref _nextPruneTicks);
        if (_seen.Count < PruneThreshold && nowTicks < due)
        {
            return;
        }

        if (Interlocked.CompareExchange(ref _nextPruneTicks, nowTicks + TimeSpan.TicksPerSecond * 10, due) != due)
        {
            return;
        }

        foreach (KeyValuePair<string, long> entry in _seen)
        {
            if (entry.Value < nowTicks)
            {
                _seen.TryRemove(entry);
            }
        }
    }
}
