namespace FaaSCache.Host.Workers;

/// <summary>
/// A language has no worker to take invocations, and none is coming: its worker failed to start too often, or the
/// host is stopping. The HTTP face answers such an invocation with 503 and this message.
/// </summary>
public sealed class WorkerStartupFailedException : WorkerFailedException
{
    /// <summary>Initializes a new instance of the <see cref="WorkerStartupFailedException"/> class.</summary>
    public WorkerStartupFailedException(string language, string message)
        : base(message) => Language = language;

    /// <summary>Gets the language whose worker is unavailable.</summary>
    public string Language { get; } = string.Empty;
}
