namespace FaaSCache.Host.Workers;

/// <summary>A language worker died, failed to start, or failed to load a function.</summary>
public class WorkerFailedException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="WorkerFailedException"/> class.</summary>
    public WorkerFailedException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="WorkerFailedException"/> class.</summary>
    public WorkerFailedException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="WorkerFailedException"/> class.</summary>
    public WorkerFailedException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
