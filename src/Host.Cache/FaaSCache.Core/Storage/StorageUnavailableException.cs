namespace FaaSCache.Storage;

/// <summary>
/// Storage did not answer a request after the retries (connections refused, timeouts, 5xx) or the circuit breaker is
/// open after such failures: the operation did not take effect as far as this instance knows. The message names the
/// operation, the key, the account and the last cause, never a credential.
/// </summary>
public sealed class StorageUnavailableException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="StorageUnavailableException"/> class.</summary>
    public StorageUnavailableException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="StorageUnavailableException"/> class.</summary>
    public StorageUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="StorageUnavailableException"/> class.</summary>
    public StorageUnavailableException(string message, Exception inner)
        : base(message, inner)
    {
    }

    /// <summary>Gets the blob key of the operation (container/name), or the container of a listing.</summary>
    public string? Key { get; init; }
}
