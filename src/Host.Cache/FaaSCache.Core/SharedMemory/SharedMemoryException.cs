namespace FaaSCache.SharedMemory;

/// <summary>A shared-memory map is missing, malformed or cannot be created.</summary>
public class SharedMemoryException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="SharedMemoryException"/> class.</summary>
    public SharedMemoryException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="SharedMemoryException"/> class.</summary>
    public SharedMemoryException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="SharedMemoryException"/> class.</summary>
    public SharedMemoryException(string message, Exception inner)
        : base(message, inner)
    {
    }
}

