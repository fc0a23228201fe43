namespace FaaSCache.Storage;

/// <summary>
/// Storage did not answer a request after the retries (connections refused, timeouts, 5xx) or the circuit breaker is
/// open after such failures: the operation did not take effect as far as this instance knows. The message names the
/// operation, the key, the account and the last cause, never a credential.
/// </summary>
public sealed class StorageUnavailableException(string message, Exception? inner = null) : BlobKeyException(message, inner);
