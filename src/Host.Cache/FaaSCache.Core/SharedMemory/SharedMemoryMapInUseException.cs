namespace FaaSCache.SharedMemory;

/// <summary>
/// A map handed over by another process (a worker's output) is still open there, so it cannot be taken over yet: the
/// worker may close it when asked (<c>CloseSharedMemoryResourcesRequest</c>), after which taking it over can succeed.
/// </summary>
public sealed class SharedMemoryMapInUseException : SharedMemoryException
{
    /// <summary>Initializes a new instance of the <see cref="SharedMemoryMapInUseException"/> class.</summary>
    public SharedMemoryMapInUseException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="SharedMemoryMapInUseException"/> class.</summary>
    public SharedMemoryMapInUseException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="SharedMemoryMapInUseException"/> class.</summary>
    public SharedMemoryMapInUseException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
