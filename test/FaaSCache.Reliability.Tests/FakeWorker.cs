using System.Threading.Channels;
using Grpc.Core;
using GrpcException = Grpc.Core.RpcException;
using Grpc.Net.Client;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// The misbehaving party: a FunctionRpc worker spoken from the test. The host starts the shim
/// (<see cref="WriteWorkersDirectory"/>: a shell script that records its command line and sleeps), exactly as it starts
/// the Python worker; this class reads that command line and connects to the host's real gRPC endpoint with the
/// worker id, answers the handshake like a worker with shared memory, and then sends whatever the test tells it to.
/// </summary>
internal sealed class FakeWorker : IAsyncDisposable
{
    /// <summary>The environment variable naming the folder the shim records its command line in.</summary>
    public const string ArgumentsDirectoryVariable = "FAASCACHE_FAKE_WORKER_DIR";

    private static readonly Marshaller<StreamingMessage> Messages = Marshallers.Create(m => m.ToByteArray(), StreamingMessage.Parser.ParseFrom);
    private static readonly Method<StreamingMessage, StreamingMessage> EventStream =
        new(MethodType.DuplexStreaming, "AzureFunctionsRpcMessages.FunctionRpc", "EventStream", Messages, Messages);

    private readonly GrpcChannel _channel;
    private readonly AsyncDuplexStreamingCall<StreamingMessage, StreamingMessage> _call;
    private readonly SemaphoreSlim _sending = new(1, 1);
    private readonly Channel<InvocationRequest> _invocations = Channel.CreateUnbounded<InvocationRequest>();
    private readonly List<string> _functionIds = [];
    private readonly Task _reader;
    private readonly int _shimPid;
    private readonly string _requestId;

    private FakeWorker(GrpcChannel channel, int shimPid, string requestId)
    {
        _channel = channel;
        _shimPid = shimPid;
        _requestId = requestId;
        _call = channel.CreateCallInvoker().AsyncDuplexStreamingCall(EventStream, null, default);
        _reader = Task.Run(ReadAsync);
    }

    /// <summary>Gets the close requests the host sent, in order.</summary>
    public List<CloseSharedMemoryResourcesRequest> Closes { get; } = [];

    /// <summary>Gets the function ids the host asked this worker to load.</summary>
    public IReadOnlyList<string> FunctionIds
    {
        get
        {
            lock (_functionIds)
            {
                return [.. _functionIds];
            }
        }
    }

    /// <summary>Writes <c>python/worker.config.json</c> and the shim into <paramref name="directory"/> (the host's --workers-dir).</summary>
    public static void WriteWorkersDirectory(string directory)
    {
        string python = Path.Combine(directory, "python");
        Directory.CreateDirectory(python);
        File.WriteAllText(Path.Combine(python, "worker.config.json"), """
            { "description": { "language": "python", "extensions": [".py"], "defaultExecutablePath": "/bin/sh", "defaultWorkerPath": "fake_worker.sh" } }
            """);
        File.WriteAllText(Path.Combine(python, "fake_worker.sh"), $$"""
            #!/bin/sh
            # Records how the host started it, then waits: the test speaks FunctionRpc in its place.
            echo "$$ $*" > "${{ArgumentsDirectoryVariable}}/$$.tmp" && mv "${{ArgumentsDirectoryVariable}}/$$.tmp" "${{ArgumentsDirectoryVariable}}/$$.args"
            exec sleep 3600
            """.Replace("\r", string.Empty, StringComparison.Ordinal));
    }

    /// <summary>Waits for the shim the host started (a new <c>.args</c> file in <paramref name="argumentsDirectory"/>) and connects as it.</summary>
    public static async Task<FakeWorker> ConnectAsync(string argumentsDirectory, TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            string? file = Directory.EnumerateFiles(argumentsDirectory, "*.args").FirstOrDefault();
            if (file is not null)
            {
                string[] words = (await File.ReadAllTextAsync(file)).Trim().Split(' ');
                File.Move(file, file + ".taken");
                string Arg(string name) => words[Array.IndexOf(words, name) + 1];
                var channel = GrpcChannel.ForAddress($"http://{Arg("--host")}:{Arg("--port")}", new GrpcChannelOptions { MaxReceiveMessageSize = null });
                var worker = new FakeWorker(channel, int.Parse(words[0], CultureInfo.InvariantCulture), Arg("--requestId"));
                await worker.SendAsync(new StreamingMessage { StartStream = new StartStream { WorkerId = Arg("--workerId") } });
                return worker;
            }

            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException($"The host did not start the fake worker's shim within {timeout.TotalSeconds:0} s.");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Sends one message, as it is (the test decides what is wrong with it).</summary>
    public async Task SendAsync(StreamingMessage message)
    {
        message.RequestId = _requestId;
        await _sending.WaitAsync();
        try
        {
            await _call.RequestStream.WriteAsync(message);
        }
        finally
        {
            _sending.Release();
        }
    }

    /// <summary>The next invocation the host sent.</summary>
    public async Task<InvocationRequest> NextInvocationAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        return await _invocations.Reader.ReadAsync(cancel.Token);
    }

    /// <summary>Completes when an invocation is waiting (without taking it).</summary>
    public async Task<bool> InvocationWaitingAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await _invocations.Reader.WaitToReadAsync(cancellationToken);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>Closes the stream and ends the shim (the host then sees its worker exit).</summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            await _call.RequestStream.CompleteAsync();
        }
        catch (Exception e) when (e is GrpcException or InvalidOperationException)
        {
            // The host is gone already.
        }

        KillShim();
        _call.Dispose();
        try
        {
            await _reader;
        }
        catch (Exception e) when (e is GrpcException or OperationCanceledException or ObjectDisposedException)
        {
        }

        _channel.Dispose();
        _sending.Dispose();
    }

    private async Task ReadAsync()
    {
        await foreach (StreamingMessage message in _call.ResponseStream.ReadAllAsync())
        {
            switch (message.ContentCase)
            {
                case StreamingMessage.ContentOneofCase.WorkerInitRequest:
                    var init = new WorkerInitResponse { Result = new StatusResult { Status = StatusResult.Types.Status.Success }, WorkerMetadata = new WorkerMetadata { RuntimeName = "fake" } };
                    init.Capabilities["SharedMemoryDataTransfer"] = "true";
                    await SendAsync(new StreamingMessage { WorkerInitResponse = init });
                    break;
                case StreamingMessage.ContentOneofCase.FunctionLoadRequest:
                    lock (_functionIds)
                    {
                        _functionIds.Add(message.FunctionLoadRequest.FunctionId);
                    }

                    await SendAsync(new StreamingMessage
                    {
                        FunctionLoadResponse = new FunctionLoadResponse { FunctionId = message.FunctionLoadRequest.FunctionId, Result = new StatusResult { Status = StatusResult.Types.Status.Success } },
                    });
                    break;
                case StreamingMessage.ContentOneofCase.InvocationRequest:
                    await _invocations.Writer.WriteAsync(message.InvocationRequest);
                    break;
                case StreamingMessage.ContentOneofCase.CloseSharedMemoryResourcesRequest:
                    lock (Closes)
                    {
                        Closes.Add(message.CloseSharedMemoryResourcesRequest);
                    }

                    break;
                case StreamingMessage.ContentOneofCase.WorkerTerminate:
                    KillShim();
                    return;
            }
        }
    }

    private void KillShim()
    {
        try
        {
            using Process shim = Process.GetProcessById(_shimPid);
            shim.Kill();
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // Already gone.
        }
    }
}
