using System.Collections.Concurrent;
using FaaSCache.Cluster;
using FaaSCache.Scaling.Protocol;
using Grpc.Net.Client;

namespace FaaSCache.ScaleController.Grpc;

/// <summary>Asks an instance for its votes (Scale.proto's <c>InstanceScale.GetVotes</c>, on its peer port, with the app's peer-key token).</summary>
public sealed class InstanceVoteClient(PeerKey key, TimeProvider time) : IDisposable
{
    private const string Method = "/faascache.scale.InstanceScale/GetVotes";
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(5);
    private readonly ConcurrentDictionary<Uri, GrpcChannel> _channels = new();

    /// <summary>Polls instance <paramref name="instanceId"/> at its peer address <paramref name="peerEndpoint"/>.</summary>
    public async Task<InstanceVotes> GetVotesAsync(string instanceId, Uri peerEndpoint, int workerCount, double instanceLoadSeconds, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(peerEndpoint);
        GrpcChannel channel = _channels.GetOrAdd(peerEndpoint, address => GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = new SocketsHttpHandler { UseProxy = false, ConnectTimeout = TimeSpan.FromSeconds(3) },
        }));
        var client = new InstanceScale.InstanceScaleClient(channel);
        var headers = new Metadata { { PeerWire.AuthHeader, key.CreateToken(Method, time.GetUtcNow()) } };
        VoteReport report = await client.GetVotesAsync(
            new VoteQuery { WorkerCount = workerCount, InstanceLoadSeconds = instanceLoadSeconds },
            headers,
            DateTime.UtcNow + CallTimeout,
            cancellationToken);
        return new InstanceVotes(
            string.IsNullOrEmpty(report.InstanceId) ? instanceId : report.InstanceId,
            [.. report.Votes.Select(v => new VoterVote(v.Voter, v.Vote_, v.HasTargetWorkerCount ? v.TargetWorkerCount : null, v.Reason))],
            report.InFlight,
            time.GetUtcNow());
    }

    /// <summary>Closes the channels of instances other than <paramref name="live"/> (ended ones).</summary>
    public void Retain(IEnumerable<Uri> live)
    {
        var keep = live.ToHashSet();
        foreach (Uri address in _channels.Keys.Where(a => !keep.Contains(a)))
        {
            if (_channels.TryRemove(address, out GrpcChannel? channel))
            {
                channel.Dispose();
            }
        }
    }

    /// <inheritdoc />
    public void Dispose()
    {
        foreach (GrpcChannel channel in _channels.Values)
        {
            channel.Dispose();
        }

        _channels.Clear();
    }
}
