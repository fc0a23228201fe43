using System.Threading.Channels;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The floor of an invocation for a worker without shared memory (the .NET isolated worker): the blob's bytes in a bare
/// FunctionRpc InvocationRequest, sent straight to that worker by a minimal FunctionRpc server in this process, and its
/// InvocationResponse; no HTTP front end, no cache, no storage. What the host's local hit adds over this is the cache's
/// cost for such a worker. The worker is the same build output, started with the Functions host's command line.
/// </summary>
internal sealed class RpcFloor : IAsyncDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);
    private readonly WebApplication _server;
    private Process _worker = null!;
    private readonly Channel<StreamingMessage> _toWorker = Channel.CreateUnbounded<StreamingMessage>();
    private readonly Channel<StreamingMessage> _fromWorker = Channel.CreateUnbounded<StreamingMessage>();
    private readonly SemaphoreSlim _one = new(1);
    private string _functionId = string.Empty;
    private long _invocations;

    private RpcFloor(WebApplication server)
    {
        _server = server;
    }

    /// <summary>Starts the server and the worker in <paramref name="appOutput"/>, and loads <paramref name="function"/>.</summary>
    public static async Task<RpcFloor> StartAsync(string appOutput, string dll, string function, string storageConnection, CancellationToken cancellationToken)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0, l => l.Protocols = HttpProtocols.Http2));
        builder.Services.AddGrpc(o =>
        {
            o.MaxReceiveMessageSize = null;
            o.MaxSendMessageSize = null;
        });
        var holder = new Holder();
        builder.Services.AddSingleton(holder);
        WebApplication server = builder.Build();
        server.MapGrpcService<Service>();
        await server.StartAsync(cancellationToken);
        var floor = new RpcFloor(server);
        holder.Floor = floor;
        Uri uri = new(server.Urls.First());
        var start = new ProcessStartInfo("dotnet") { WorkingDirectory = appOutput, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        string id = Guid.NewGuid().ToString();
        foreach (string a in new[]
        {
            Path.Combine(appOutput, dll), "--functions-uri", uri.ToString(), "--functions-worker-id", id, "--functions-request-id", id,
            "--functions-grpc-max-message-length", int.MaxValue.ToString(System.Globalization.CultureInfo.InvariantCulture),
        })
        {
            start.ArgumentList.Add(a);
        }

        start.Environment["FUNCTIONS_WORKER_RUNTIME"] = "dotnet-isolated";
        start.Environment["FUNCTIONS_WORKER_DIRECTORY"] = appOutput;
        start.Environment["FUNCTIONS_APPLICATION_DIRECTORY"] = appOutput;
        start.Environment["AzureWebJobsStorage"] = storageConnection;
        floor._worker = Process.Start(start)!;
        floor._worker.OutputDataReceived += (_, _) => { };
        floor._worker.ErrorDataReceived += (_, _) => { };
        floor._worker.BeginOutputReadLine();
        floor._worker.BeginErrorReadLine();
        try
        {
            await floor.HandshakeAsync(function, cancellationToken);
            return floor;
        }
        catch
        {
            await floor.DisposeAsync();
            throw;
        }
    }

    /// <summary>One invocation of the loaded function with <paramref name="blob"/> as its blob input; returns the ticks of the round trip.</summary>
    public async Task<long> InvokeAsync(string triggerName, string blobBinding, string blobName, byte[] blob, CancellationToken cancellationToken)
    {
        await _one.WaitAsync(cancellationToken);
        try
        {
            var request = new InvocationRequest
            {
                InvocationId = $"floor-{Interlocked.Increment(ref _invocations)}",
                FunctionId = _functionId,
                TraceContext = new RpcTraceContext { TraceParent = $"00-{ActivityTraceId.CreateRandom().ToHexString()}-{ActivitySpanId.CreateRandom().ToHexString()}-00" },
            };
            var http = new RpcHttp { Method = "GET", Url = $"http://127.0.0.1/api/touch/{blobName}" };
            http.Params["name"] = blobName;
            http.NullableParams["name"] = new NullableString { Value = blobName };
            request.InputData.Add(new ParameterBinding { Name = triggerName, Data = new TypedData { Http = http } });
            request.InputData.Add(new ParameterBinding { Name = blobBinding, Data = new TypedData { Bytes = UnsafeByteOperations.UnsafeWrap(blob) } });
            long started = Stopwatch.GetTimestamp();
            await _toWorker.Writer.WriteAsync(new StreamingMessage { InvocationRequest = request }, cancellationToken);
            StreamingMessage answer = await ReceiveAsync(StreamingMessage.ContentOneofCase.InvocationResponse, cancellationToken);
            long ticks = Stopwatch.GetTimestamp() - started;
            if (answer.InvocationResponse.Result.Status != StatusResult.Types.Status.Success)
            {
                throw new InvalidOperationException($"The floor's invocation failed in the worker: {answer.InvocationResponse.Result.Exception?.Message}");
            }

            return ticks;
        }
        finally
        {
            _one.Release();
        }
    }

    public async ValueTask DisposeAsync()
    {
        _toWorker.Writer.TryComplete();
        try
        {
            if (_worker is { HasExited: false })
            {
                _worker.Kill(entireProcessTree: true);
                await _worker.WaitForExitAsync();
            }
        }
        catch (InvalidOperationException)
        {
        }

        _worker?.Dispose();
        await _server.DisposeAsync();
        _one.Dispose();
    }

    private async Task HandshakeAsync(string function, CancellationToken cancellationToken)
    {
        await _toWorker.Writer.WriteAsync(new StreamingMessage { WorkerInitRequest = new WorkerInitRequest { HostVersion = "floor", FunctionAppDirectory = _worker.StartInfo.WorkingDirectory } }, cancellationToken);
        await ReceiveAsync(StreamingMessage.ContentOneofCase.WorkerInitResponse, cancellationToken);
        await _toWorker.Writer.WriteAsync(new StreamingMessage { FunctionsMetadataRequest = new FunctionsMetadataRequest { FunctionAppDirectory = _worker.StartInfo.WorkingDirectory } }, cancellationToken);
        StreamingMessage metadata = await ReceiveAsync(StreamingMessage.ContentOneofCase.FunctionMetadataResponse, cancellationToken);
        RpcFunctionMetadata touch = metadata.FunctionMetadataResponse.FunctionMetadataResults.Single(f => f.Name == function);
        _functionId = touch.FunctionId;
        var load = new RpcFunctionMetadata { Name = touch.Name, Directory = touch.Directory, ScriptFile = touch.ScriptFile, EntryPoint = touch.EntryPoint, FunctionId = touch.FunctionId, Language = "dotnet-isolated" };
        load.RawBindings.Add(touch.RawBindings);
        foreach (string raw in touch.RawBindings)
        {
            System.Text.Json.Nodes.JsonNode json = System.Text.Json.Nodes.JsonNode.Parse(raw)!;
            string direction = json["direction"]!.GetValue<string>();
            load.Bindings[json["name"]!.GetValue<string>()] = new BindingInfo
            {
                Type = json["type"]!.GetValue<string>(),
                Direction = direction.Equals("in", StringComparison.OrdinalIgnoreCase) ? BindingInfo.Types.Direction.In : BindingInfo.Types.Direction.Out,
            };
        }

        await _toWorker.Writer.WriteAsync(new StreamingMessage { FunctionLoadRequest = new FunctionLoadRequest { FunctionId = touch.FunctionId, Metadata = load } }, cancellationToken);
        StreamingMessage loaded = await ReceiveAsync(StreamingMessage.ContentOneofCase.FunctionLoadResponse, cancellationToken);
        if (loaded.FunctionLoadResponse.Result.Status != StatusResult.Types.Status.Success)
        {
            throw new InvalidOperationException($"The floor's worker could not load {function}: {loaded.FunctionLoadResponse.Result.Exception?.Message}");
        }
    }

    private async Task<StreamingMessage> ReceiveAsync(StreamingMessage.ContentOneofCase kind, CancellationToken cancellationToken)
    {
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        limit.CancelAfter(Timeout);
        while (true)
        {
            StreamingMessage message = await _fromWorker.Reader.ReadAsync(limit.Token);
            if (message.ContentCase == kind)
            {
                return message;
            }
        }
    }

    private sealed class Holder
    {
        public RpcFloor? Floor { get; set; }
    }

    private sealed class Service(Holder holder) : FunctionRpc.FunctionRpcBase
    {
        public override async Task EventStream(IAsyncStreamReader<StreamingMessage> requestStream, IServerStreamWriter<StreamingMessage> responseStream, ServerCallContext context)
        {
            RpcFloor floor = holder.Floor ?? throw new InvalidOperationException("No floor to serve.");
            Task pump = Task.Run(async () =>
            {
                await foreach (StreamingMessage message in floor._toWorker.Reader.ReadAllAsync(context.CancellationToken))
                {
                    await responseStream.WriteAsync(message, context.CancellationToken);
                }
            });
            while (await requestStream.MoveNext(context.CancellationToken))
            {
                await floor._fromWorker.Writer.WriteAsync(requestStream.Current, context.CancellationToken);
            }

            floor._toWorker.Writer.TryComplete();
            await pump;
        }
    }
}
