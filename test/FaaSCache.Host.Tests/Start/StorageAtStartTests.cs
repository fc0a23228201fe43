using System.Net;
using System.Net.Sockets;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// No storage, no stack trace (issue 32): with the development storage and nothing on its port the host starts Azurite
/// itself (and stops it when it stops); an account that does not answer is one line and a non-zero exit.
/// </summary>
[Trait("Category", "Integration")]
public sealed class StorageAtStartTests : AzuriteTests
{
    [Fact]
    public async Task An_account_that_does_not_answer_is_one_line_naming_its_endpoint_and_a_non_zero_exit()
    {
        int nobody = FreePorts.Get();
        using FunctionAppFolder app = Hello();
        using var shm = new TempShmDirectory();
        string connection = $"DefaultEndpointsProtocol=http;AccountName=myaccount;AccountKey={AzuriteServer.AccountKey};BlobEndpoint=http://127.0.0.1:{nobody}/myaccount";

        HostRun run = await FaaSCacheHostProcess.RunToExitAsync(app.Path, connection, shm.Path, TimeSpan.FromSeconds(60));

        Assert.NotEqual(0, run.ExitCode);
        Assert.Contains($"Storage at http://127.0.0.1:{nobody} does not answer (connection refused): check the account and endpoint in AzureWebJobsStorage", run.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("Unhandled exception", run.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task With_the_development_storage_not_running_the_host_starts_azurite_serves_and_stops_it_at_exit()
    {
        // The development storage's port: this test needs it free (stop an Azurite of your own on 10000 to run it).
        Assert.True(Free(10000), "port 10000 is in use: the development storage is already running on this machine");
        Assert.True(Free(10001), "port 10001 is in use: the development storage's queue service is already running on this machine");

        using FunctionAppFolder app = Hello();
        using var shm = new TempShmDirectory();
        await using (FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, "UseDevelopmentStorage=true", shm.Path))
        {
            await host.WaitForWorkersAsync();
            using var http = new HttpClient { BaseAddress = host.BaseUri };
            Assert.Equal("hello", await http.GetStringAsync("api/hello"));
            Assert.Contains("nothing answered on 127.0.0.1:10000, so the host started Azurite", host.Output, StringComparison.Ordinal);
            Assert.True(Directory.Exists(Path.Combine(app.Path, ".faascache", "azurite")));
            // Its queue service too (the blob triggers' poison queue).
            var clock = Stopwatch.StartNew();
            while (Free(10001) && clock.Elapsed < TimeSpan.FromSeconds(15))
            {
                await Task.Delay(100);
            }

            Assert.False(Free(10001), $"nothing listens on the development storage's queue port 10001{Environment.NewLine}{host.Output}");
            Assert.Equal(0, await host.StopAsync());
        }

        Assert.True(Free(10000), "the Azurite the host started is gone with it");
        Assert.True(Free(10001), "the queue service the host started is gone with it");
    }

    private static bool Free(int port)
    {
        try
        {
            using var listener = new TcpListener(IPAddress.Loopback, port);
            listener.Start();
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private static FunctionAppFolder Hello() => PipelineApp.NewBuilder("faascache-devstorage", "python")
        .WithFile("function_app.py", """
            import azure.functions as func

            app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


            @app.route(route="hello", methods=["GET"])
            def hello(req: func.HttpRequest) -> func.HttpResponse:
                return func.HttpResponse("hello")
            """)
        .Build();
}
