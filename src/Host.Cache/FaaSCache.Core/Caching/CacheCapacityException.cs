namespace FaaSCache.Caching;

/// <summary>An object cannot be kept by the cache and nowhere else would keep it.</summary>
public sealed class CacheCapacityException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="CacheCapacityException"/> class.</summary>
    public CacheCapacityException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="CacheCapacityException"/> class.</summary>
    public CacheCapacityException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="CacheCapacityException"/> class.</summary>
    public CacheCapacityException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
