namespace FaaSCache.Simulation.Trace;

/// <summary>
/// Seeds and hashes for the generator. Not <see cref="HashCode.Combine{T1, T2}(T1, T2)"/>: it is seeded per process,
/// and a trace must be the same in every run.
/// </summary>
internal static class Seeds
{
    /// <summary>A seed for <see cref="Random"/> from the trace's seed and a salt naming the stream.</summary>
    public static int Of(int seed, ulong salt) => (int)Mix(((ulong)(uint)seed << 32) ^ (salt * 0x9E3779B97F4A7C15UL));

    /// <summary>A uniform number in [0, 1) fixed by its inputs.</summary>
    public static double Uniform(int seed, int app, long item, ulong stream)
    {
        ulong h = Mix(((ulong)(uint)seed * 0x9E3779B97F4A7C15UL) ^ ((ulong)(uint)app << 40) ^ (ulong)item ^ (stream * 0xD1B54A32D192ED03UL));
        return (h >> 11) * (1.0 / (1UL << 53));
    }

    /// <summary>SplitMix64's finaliser: a cheap, well-spread hash.</summary>
    public static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }
}
