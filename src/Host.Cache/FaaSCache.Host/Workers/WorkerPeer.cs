namespace FaaSCache.Host.Workers;

/// <summary>
/// The worker process at the other end of a <see cref="WorkerChannel"/>, as each of its phases names it in logs and
/// errors: its id, language and pid, and whether it is gone for good.
/// </summary>
internal sealed class WorkerPeer
{
    /// <summary>Initializes a new instance of the <see cref="WorkerPeer"/> class.</summary>
    public WorkerPeer(string workerId, string language)
    {
        WorkerId = workerId;
        Language = language;
    }

    /// <summary>Gets the worker id given on the command line.</summary>
    public string WorkerId { get; }

    /// <summary>Gets the worker's language.</summary>
    public string Language { get; }

    /// <summary>Gets or sets the worker's process id (known once the process started, after the channel was made).</summary>
    public int ProcessId { get; set; }

    /// <summary>Gets or sets a value indicating whether the worker is gone for good.</summary>
    public bool IsClosed { get; set; }
}
