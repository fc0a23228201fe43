namespace FaaSCache.Simulation.Engine;

/// <summary>A key's access counts in one simulated cachelet since its load (the fields of a pre-warm snapshot entry).</summary>
internal sealed class KeyStats
{
    public long OwnHits { get; set; }

    public long OwnMisses { get; set; }

    public long OwnWrites { get; set; }

    public long PeerHits { get; set; }

    public long PeerMisses { get; set; }

    public long PeerWrites { get; set; }

    public long Accesses { get; private set; }

    public long FirstMs { get; private set; }

    public long LastMs { get; private set; }

    public void Accessed(long timeMs)
    {
        if (Accesses++ == 0)
        {
            FirstMs = timeMs;
        }

        LastMs = timeMs;
    }
}
