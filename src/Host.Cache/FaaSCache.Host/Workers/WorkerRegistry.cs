namespace FaaSCache.Host.Workers;

/// <summary>Worker channels by worker id, so the gRPC service can hand a new stream to its channel.</summary>
public sealed class WorkerRegistry
{
    private readonly ConcurrentDictionary<string, WorkerChannel> _channels = new(StringComparer.Ordinal);

    /// <summary>Registers a channel.</summary>
    public void Add(WorkerChannel channel) => _channels[channel.WorkerId] = channel;

    /// <summary>Forgets a channel.</summary>
    public void Remove(WorkerChannel channel) => _channels.TryRemove(new KeyValuePair<string, WorkerChannel>(channel.WorkerId, channel));

    /// <summary>Finds a channel by worker id.</summary>
    public bool TryGet(string workerId, out WorkerChannel channel) => _channels.TryGetValue(workerId, out channel!);
}
