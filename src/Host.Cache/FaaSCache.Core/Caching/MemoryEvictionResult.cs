namespace FaaSCache.Caching;

/// <summary>What one memory-pressure eviction freed.</summary>
/// <param name="Objects">Objects evicted.</param>
/// <param name="Bytes">Bytes freed.</param>
/// <param name="Skipped">Cached objects left because they are in use or not yet persisted.</param>
/// <param name="KeptBytesReleased">Bytes of deleted maps' files kept for reuse that were deleted first.</param>
public readonly record struct MemoryEvictionResult(int Objects, long Bytes, int Skipped, long KeptBytesReleased = 0);
