using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;
using RpcException = Grpc.Core.RpcException;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// Issue 31, row 6, tried as an attacker would: another local user reads a real Python worker's id and the host's
/// FunctionRpc address from <c>/proc/&lt;pid&gt;/cmdline</c> and opens a second EventStream with that id. The host refuses
/// it (and a stream for an id it never started), logs who tried, and the real worker's stream is untouched: its
/// invocations keep answering 200 and the status still says running, same pid, no restart.
/// </summary>
[Trait("Category", "Security")]
public sealed class WorkerStreamHijackTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_second_stream_with_a_live_workers_id_is_refused_and_the_first_keeps_serving()
    {
        using var shm = new TempShmDirectory();
        using FunctionAppFolder app = new FunctionAppBuilder { NamePrefix = "faascache-hijack" }
            .WithSetting("FUNCTIONS_WORKER_RUNTIME", "python")
            .WithFunction("Hello", """
                { "bindings": [
                  { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
                  { "type": "http", "direction": "out", "name": "$return" } ] }
                """, ("__init__.py", """
                import azure.functions as func


                def main(req: func.HttpRequest) -> func.HttpResponse:
                    return func.HttpResponse("hi")
                """))
            .Build();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(
            app.Path, azurite.ConnectionString, shm.Path, extraArgs: new Dictionary<string, string> { ["--membership"] = "off" });
        HostWorkerStatus before = (await host.WaitForWorkersAsync()).Worker("python");
        await AssertHelloAsync(host, times: 1);

        // What any local user can read: the worker's command line.
        string[] cmdline = (await File.ReadAllTextAsync($"/proc/{before.Pid}/cmdline")).Split('\0');
        string workerId = ArgumentAfter(cmdline, "--workerId");
        var rpc = new Uri(ArgumentAfter(cmdline, "--functions-uri"));
        using GrpcChannel channel = GrpcChannel.ForAddress(rpc);
        var client = new FunctionRpc.FunctionRpcClient(channel);

        // Several at once, as a racing attacker would: every one refused while the real stream is attached.
        RpcException[] refusals = await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => OpenStreamAsync(client, workerId)));
        foreach (RpcException refused in refusals)
        {
            Assert.Equal(StatusCode.AlreadyExists, refused.StatusCode);
            Assert.Contains($"Worker id '{workerId}' already has a stream", refused.Status.Detail, StringComparison.Ordinal);
        }

        RpcException unknown = await OpenStreamAsync(client, Guid.NewGuid().ToString());
        Assert.Equal(StatusCode.NotFound, unknown.StatusCode);

        await AssertHelloAsync(host, times: 5);
        HostWorkerStatus after = (await host.GetStatusAsync()).Worker("python");
        Assert.True(after.IsRunning, $"the python worker is {after.State} after the refused streams");
        Assert.Equal((before.Pid, before.Restarts), (after.Pid, after.Restarts));
        Assert.Contains($"Refused a second EventStream for worker {workerId} (pid {before.Pid}) from ipv4:127.0.0.1:", host.Output, StringComparison.Ordinal);
        Assert.Equal(0, await host.StopAsync());
    }

    private static async Task AssertHelloAsync(FaaSCacheHostProcess host, int times)
    {
        for (int n = 0; n < times; n++)
        {
            using HttpResponseMessage response = await host.Http.GetAsync("api/Hello");
            string body = await response.Content.ReadAsStringAsync();
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"call {n}: HTTP {(int)response.StatusCode} {body}{Environment.NewLine}Host output:{Environment.NewLine}{host.Output}");
            Assert.Equal("hi", body);
        }
    }

    private static string ArgumentAfter(string[] cmdline, string name)
    {
        int at = Array.IndexOf(cmdline, name);
        Assert.True(at >= 0 && at + 1 < cmdline.Length, $"the worker's command line has no {name}: {string.Join(' ', cmdline)}");
        return cmdline[at + 1];
    }

    /// <summary>Opens an EventStream as a worker would (StartStream first) and returns how the host refused it.</summary>
    private static async Task<RpcException> OpenStreamAsync(FunctionRpc.FunctionRpcClient client, string workerId)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        using AsyncDuplexStreamingCall<StreamingMessage, StreamingMessage> call = client.EventStream(cancellationToken: timeout.Token);
        await call.RequestStream.WriteAsync(new StreamingMessage { RequestId = Guid.NewGuid().ToString(), StartStream = new StartStream { WorkerId = workerId } });
        return await Assert.ThrowsAsync<RpcException>(async () =>
        {
            while (await call.ResponseStream.MoveNext(timeout.Token))
            {
                Assert.Fail($"the host sent {call.ResponseStream.Current.ContentCase} on a stream for worker id '{workerId}' it should have refused");
            }
        });
    }
}
