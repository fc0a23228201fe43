using FaaSCache.Diagnostics;
using FaaSCache.Hosting;
using FaaSCache.Security.Keys;

namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// Starts each instance as a FaaSCache host process on this machine: <c>dotnet FaaSCache.Host.dll start</c> with the
/// app, a free HTTP and peer port, membership on, its own shared-memory folder, and this controller as the target of its
/// urgent votes. Ready means <c>GET /admin/host/status</c> answers with every worker running (the tests' rule); the time
/// from launch to ready is the instance's T_Load (§4).
/// </summary>
public sealed class HostProcessLauncher(ScaleControllerOptions options, IInstanceNetwork network, ILogger<HostProcessLauncher> logger, TimeProvider time, KeyAuthorizer keys) : IInstanceLauncher
{
    /// <summary>The prefix of every instance's shared-memory folder under the root (the run script removes leftovers by it).</summary>
    public const string ShmPrefix = "faascache-scale-";

    private static readonly TimeSpan ProbeInterval = TimeSpan.FromMilliseconds(200);

    /// <inheritdoc />
    public async Task<ILaunchedInstance> LaunchAsync(string instanceId, CancellationToken cancellationToken)
    {
        long launched = time.GetTimestamp();
        InstanceNetworkLease net = await network.AcquireAsync(instanceId, cancellationToken);
        string address = net.BindAddress.ToString();
        int port = FreePorts.Get(IPAddress.Loopback);
        int peerPort = FreePorts.Get(IPAddress.Loopback);
        string controllerGrpc = $"http://{net.ControllerAddress}:{Invariant(options.GrpcPort)}/";
        string shm = Path.Combine(options.SharedMemoryRoot, ShmPrefix + instanceId + "-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(shm);
        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } p && File.Exists(p) ? p : "dotnet";
        var start = new ProcessStartInfo(dotnet)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = options.ScriptRoot,
        };
        foreach (string arg in (string[])[
            options.HostDll, "start", "--script-root", options.ScriptRoot, "--port", Invariant(port), "--app-name", options.AppName,
            "--instance-id", instanceId, "--membership", "on", "--peer-port", Invariant(peerPort), "--listen-address", address,
            "--peer-address", address, "--scale-controller", controllerGrpc, "--auth", options.EnforceKeys ? "on" : "off"])
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["AzureWebJobsStorage"] = net.StorageConnection;
        start.Environment["FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES"] = shm;
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        var process = new Process { StartInfo = net.Wrap(start), EnableRaisingEvents = true };
        var tail = new OutputTail(60);
        process.OutputDataReceived += (_, e) => tail.Add(e.Data);
        process.ErrorDataReceived += (_, e) => tail.Add(e.Data);
        try
        {
            process.Start();
        }
        catch
        {
            process.Dispose();
            await net.Release();
            Directory.Delete(shm, recursive: true);
            throw;
        }


        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var http = new Uri($"http://{address}:{Invariant(port)}/");
        var instance = new HostProcessInstance(instanceId, process, http, new Uri($"http://{address}:{Invariant(peerPort)}/"), shm, net.Release, tail, logger);
        logger.LogInformation("Launched {Id} (pid {Pid}) on {Http}, peer port {PeerPort}, shared memory {Shm}, {Network}", instanceId, process.Id, http, peerPort, shm, net.Description);
        try
        {
            await WaitReadyAsync(instance, cancellationToken);
            instance.LoadTime = time.GetElapsedTime(launched);
            return instance;
        }
        catch
        {
            await instance.DisposeAsync();
            throw;
        }
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);

    private async Task WaitReadyAsync(HostProcessInstance instance, CancellationToken cancellationToken)
    {
        using var http = new HttpClient(new SocketsHttpHandler { UseProxy = false }) { BaseAddress = instance.HttpEndpoint, Timeout = TimeSpan.FromSeconds(5) };
        if (keys.Enforced)
        {
            // The instances read the same key store (the app's): its master key opens their admin routes.
            http.DefaultRequestHeaders.Add(KeyAuthorizer.KeyHeader, keys.Store.GetHostKeys().MasterKey);
        }

        try
        {
            await HostReadiness.WaitAsync(
                http,
                options.StartTimeout,
                () => instance.HasExited ? $"exited with code {instance.ExitCode}" : null,
                ProbeInterval,
                time,
                cancellationToken);
        }
        catch (HostNotReadyException e)
        {
            throw new InstanceStartException($"{instance.Id}: {e.Message}{Environment.NewLine}{instance.OutputTail}", e);
        }
    }
}
