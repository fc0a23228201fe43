using FaaSCache.Cluster;
using FaaSCache.Scaling.Protocol;
using Grpc.Core;
using Grpc.Net.Client;

namespace FaaSCache.Scaling.Grpc;

/// <summary>Sends urgent votes to the scale controller (Scale.proto's <c>ScaleController.ReportVote</c>), with the peer key's token.</summary>
internal sealed class GrpcScaleOutRequester : IScaleOutRequester, IDisposable
{
    private const string Method = "/faascache.scale.ScaleController/ReportVote";
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(10);
    private readonly GrpcChannel _channel;
    private readonly ScaleController.ScaleControllerClient _client;
    private readonly PeerKey _key;
    private readonly string _app;
    private readonly string _instanceId;
    private readonly TimeProvider _time;

    public GrpcScaleOutRequester(Uri controller, PeerKey key, string app, string instanceId, TimeProvider? time = null)
    {
        _channel = GrpcChannel.ForAddress(controller, new GrpcChannelOptions { HttpHandler = new SocketsHttpHandler { UseProxy = false, ConnectTimeout = TimeSpan.FromSeconds(3) } });
        _client = new ScaleController.ScaleControllerClient(_channel);
        _key = key;
        _app = app;
        _instanceId = instanceId;
        _time = time ?? TimeProvider.System;
        Address = controller;
    }

    public Uri Address { get; }

    public async Task<ScaleOutReply> RequestAsync(string voter, int targetInstances, string reason, CancellationToken cancellationToken = default)
    {
        var request = new UrgentVote { App = _app, InstanceId = _instanceId, Voter = voter, TargetWorkerCount = targetInstances, Reason = reason };
        var headers = new Metadata { { PeerWire.AuthHeader, _key.CreateToken(Method, _time.GetUtcNow()) } };
        UrgentVoteReply reply = await _client.ReportVoteAsync(request, headers, DateTime.UtcNow + CallTimeout, cancellationToken).ConfigureAwait(false);
        return new ScaleOutReply(reply.Accepted, reply.WorkerCount, reply.Reason, reply.InstanceLoadSeconds > 0 ? TimeSpan.FromSeconds(reply.InstanceLoadSeconds) : null);
    }

    public void Dispose() => _channel.Dispose();
}
