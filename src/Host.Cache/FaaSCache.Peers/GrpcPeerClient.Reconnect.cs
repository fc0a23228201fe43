namespace FaaSCache.Peers;

/// <summary>
/// Connections that lived through a cut are not used again. A TCP connection whose packets were dropped for a while (a
/// partition) is still open at both ends after the link heals, but stalled in retransmission back-off for up to tens of
/// seconds: a call on it waits for the keep-alive ping to fail (10 s) and then fails, and a write through it ends with
/// its outcome unknown, long after the link came back. So when this instance holds its membership lease again after
/// losing it (it was cut off from storage, and maybe from its peers), every cached channel is retired, and when a member
/// joins the ring (again) or leaves it, the channel to it is retired; the next call connects anew. A retired channel is
/// disposed once any call still on it has had its longest timeout.
/// </summary>
public sealed partial class GrpcPeerClient
{
    private readonly ConcurrentDictionary<Lazy<PeerChannel>, byte> _retired = new();
    private int _leaseLost;
    private long _channelsRetired;

    /// <summary>Gets the number of channels retired after a cut (see <see cref="FollowMembership"/>).</summary>
    internal long ChannelsRetired => Interlocked.Read(ref _channelsRetired);

    /// <summary>
    /// Retires cached connections when <paramref name="owners"/> says they may have lived through a cut: all of them when
    /// this instance holds its membership lease again after losing it, a member's when it joins or leaves the ring.
    /// </summary>
    public void FollowMembership(IOwnerLocator owners)
    {
        ArgumentNullException.ThrowIfNull(owners);
        owners.LeaseChanged += (_, e) =>
        {
            if (!e.Held)
            {
                Volatile.Write(ref _leaseLost, 1);
            }
            else if (Interlocked.Exchange(ref _leaseLost, 0) == 1)
            {
                RetireChannels(_ => true, "this instance holds its membership lease again after losing it");
            }
        };
        owners.RingChanged += (_, e) =>
        {
            var endpoints = new HashSet<Uri>();
            foreach (string member in e.Added.Concat(e.Removed))
            {
                if (!string.Equals(member, owners.SelfId, StringComparison.Ordinal) && _directory.TryGetEndpoint(member, out Uri endpoint))
                {
                    endpoints.Add(endpoint);
                }
            }

            if (endpoints.Count > 0)
            {
                RetireChannels(endpoints.Contains, $"the ring changed (joined: [{string.Join(", ", e.Added)}], left: [{string.Join(", ", e.Removed)}])");
            }
        };
    }

    private void RetireChannels(Func<Uri, bool> which, string reason)
    {
        int retired = 0;
        foreach (KeyValuePair<Uri, Lazy<PeerChannel>> entry in _channels)
        {
            if (which(entry.Key) && _channels.TryRemove(entry) && entry.Value.IsValueCreated)
            {
                retired++;
                Interlocked.Increment(ref _channelsRetired);
                _retired[entry.Value] = 0;
                _ = DisposeRetiredAsync(entry.Value);
            }
        }

        if (retired > 0)
        {
            _logger.LogInformation("Retired {Count} peer connection(s): {Reason}; the next calls connect anew", retired, reason);
        }
    }

    private async Task DisposeRetiredAsync(Lazy<PeerChannel> channel)
    {
        await Task.Delay(_options.FetchTimeout + _options.IdleTimeout, _time).ConfigureAwait(false);
        if (_retired.TryRemove(channel, out _))
        {
            DisposeChannel(channel.Value);
        }
    }

    private static void DisposeChannel(PeerChannel channel)
    {
        channel.Channel.Dispose();
        while (channel.IdleBulk.TryDequeue(out System.Net.Sockets.Socket? idle))
        {
            idle.Dispose();
        }
    }
}
