using System.Net.Http.Json;
using FaaSCache.Host.Admin;

namespace FaaSCache.Benchmarks;

/// <summary>
/// <c>remote-read --pods</c>: two host pods of the benchmark's app on podman (<c>scripts/pods.sh up APP 2</c>, the
/// manifests of <c>faascache kubernetes manifests</c> played with <c>podman kube play</c>), each with its own address on
/// the pods' bridge network, and storage (Azurite) in a container on the same network. A read is the reader pod's own
/// <c>POST /admin/cache/read</c>, timed inside that pod (the cachelet's ReadAsync, as the in-process reader of the other
/// rows is timed): <c>rh_pods</c> the owner pod holds the object, <c>rm_pods</c> the owner fetches it from storage first.
/// </summary>
internal sealed class PodsRemoteReadRig : IAsyncDisposable
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);
    private readonly string _state;
    private readonly string _name;
    private readonly string _tag;
    private readonly string _masterKey;
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromMinutes(5) };
    private readonly Dictionary<string, (string Reader, string Owner)> _placement = new(StringComparer.Ordinal);

    private PodsRemoteReadRig(string state, string name, string tag, string masterKey, BlobContainerClient container, IReadOnlyList<string> addresses)
    {
        _state = state;
        _name = name;
        _tag = tag;
        _masterKey = masterKey;
        Container = container;
        Addresses = addresses;
    }

    /// <summary>Gets the container in the pods' storage that holds the objects.</summary>
    public BlobContainerClient Container { get; }

    /// <summary>Gets the host pods' addresses.</summary>
    public IReadOnlyList<string> Addresses { get; }

    /// <summary>Starts two host pods of the app in <paramref name="appDirectory"/> (its folder name names them).</summary>
    public static async Task<PodsRemoteReadRig> StartAsync(string appDirectory, string containerName, TextWriter output, CancellationToken cancellationToken)
    {
        string state = Directory.CreateTempSubdirectory("faascache-bench-pods-").FullName;
        string tag = $"bench-{Guid.NewGuid():N}"[..14];
        output.WriteLine("pods: scripts/pods.sh up (images made when missing or stale, then 2 host pods) ...");
        ProcessRun up = await Script(state, tag, TimeSpan.FromMinutes(20), cancellationToken, "up", appDirectory, "2");
        // pods.sh names the app after its folder (a DNS label): its state folder is the one folder it made.
        string name = Directory.GetDirectories(state).Select(d => Path.GetFileName(d)).SingleOrDefault() ?? "";
        if (up.ExitCode != 0)
        {
            await Script(state, tag, TimeSpan.FromMinutes(3), CancellationToken.None, "down");
            await RemoveImageAsync(name, tag);
            Directory.Delete(state, recursive: true);
            throw new InvalidOperationException($"scripts/pods.sh up failed: {up}");
        }

        string folder = Path.Combine(state, name);
        string storage = File.ReadAllLines(Path.Combine(folder, "storage.env")).Single(l => l.StartsWith("AzureWebJobsStorage=", StringComparison.Ordinal))["AzureWebJobsStorage=".Length..];
        string master = File.ReadAllLines(Path.Combine(folder, "podman", "keys.env")).Single(l => l.StartsWith("master=", StringComparison.Ordinal))["master=".Length..];
        List<string> addresses = [.. up.Stdout.Split('\n').Select(l => l.Split(' ')).Where(p => p.Length >= 3 && p[0].StartsWith($"{name}-pod-", StringComparison.Ordinal) && IPAddress.TryParse(p[1], out _)).Select(p => p[1])];
        if (addresses.Count != 2)
        {
            throw new InvalidOperationException($"expected two host pods in pods.sh's status lines: {up.Stdout}");
        }

        BlobContainerClient container = new BlobServiceClient(storage, AzureBlobStore.CreateClientOptions()).GetBlobContainerClient(containerName);
        await container.CreateIfNotExistsAsync(cancellationToken: cancellationToken);
        output.WriteLine($"pods: {name}-pod-0 at {addresses[0]} and {name}-pod-1 at {addresses[1]} on podman network faascache-{name} (bridge, veth per pod, runc), storage (Azurite) in a container on it");
        return new PodsRemoteReadRig(state, name, tag, master, container, addresses);
    }

    /// <summary>Finds which pod owns <paramref name="key"/> (a first read from pod 0: a remote miss means pod 1 owns it) and leaves it in the owner's memory.</summary>
    public async Task FillOwnerAsync(string key, long size, CancellationToken cancellationToken)
    {
        HostCacheRead first = await ReadAsync(Addresses[0], key, cancellationToken);
        (string Reader, string Owner) placement = first.Source switch
        {
            "rm" => (Addresses[0], Addresses[1]),
            "lm" => (Addresses[1], Addresses[0]),
            _ => throw new InvalidOperationException($"{key}: a first read from {Addresses[0]} was a {first.Source}, not a remote or local miss."),
        };
        _placement[key] = placement;
        await RemoveAsync(placement.Reader, key, cancellationToken);
        HostCacheRead check = await ReadAsync(placement.Reader, key, cancellationToken);
        if (check.Source != "rh" || check.Bytes != size)
        {
            throw new InvalidOperationException($"{key}: expected a remote hit of {size} bytes from {placement.Reader}, got a {check.Source} of {check.Bytes}.");
        }
    }

    /// <summary>The pods' paths for <paramref name="key"/> (after <see cref="FillOwnerAsync"/>).</summary>
    public List<ITimedPath> Paths(string key, long size) =>
    [
        new RemoteReadRig.RemotePath("rh_pods", async ct =>
        {
            (string reader, _) = _placement[key];
            await RemoveAsync(reader, key, ct);
            return Ticks(Check(await ReadAsync(reader, key, ct), "rh", size));
        }),
        new RemoteReadRig.RemotePath("rm_pods", async ct =>
        {
            (string reader, string owner) = _placement[key];
            await RemoveAsync(reader, key, ct);
            await RemoveAsync(owner, key, ct);
            return Ticks(Check(await ReadAsync(reader, key, ct), "rm", size));
        }),
    ];

    /// <summary>Drops <paramref name="key"/> from both pods.</summary>
    public async Task ForgetAsync(string key, CancellationToken cancellationToken)
    {
        foreach (string address in Addresses)
        {
            await RemoveAsync(address, key, cancellationToken);
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await Script(_state, _tag, TimeSpan.FromMinutes(3), CancellationToken.None, "down", _name);
        await RemoveImageAsync(_name, _tag);
        _http.Dispose();
        Directory.Delete(_state, recursive: true);
    }

    private static Task<ProcessRun> RemoveImageAsync(string name, string tag) =>
        ProcessRun.RunAsync("bash", ["-c", "source \"$1\" && podman_ rmi -f \"$2\"", "podman", Path.Combine(RepositoryRoot.Find(), "scripts", "lib", "podman.sh"), $"localhost/faascache-app-{name}:{tag}"], TimeSpan.FromMinutes(1));

    private static long Ticks(HostCacheRead read) => (long)(read.Seconds * Stopwatch.Frequency);

    private static HostCacheRead Check(HostCacheRead read, string source, long size) =>
        read.Source == source && read.Bytes == size
            ? read
            : throw new InvalidOperationException($"{read.Key}: expected a {source} of {size} bytes, got a {read.Source} of {read.Bytes} bytes.");

    private static Task<ProcessRun> Script(string state, string tag, TimeSpan timeout, CancellationToken cancellationToken, params string[] arguments) =>
        ProcessRun.RunAsync(
            "bash",
            [Path.Combine(RepositoryRoot.Find(), "scripts", "pods.sh"), .. arguments],
            timeout,
            new Dictionary<string, string> { ["FAASCACHE_PODS_DIR"] = state, ["FAASCACHE_IMAGE_TAG"] = tag },
            cancellationToken: cancellationToken);

    private async Task<HostCacheRead> ReadAsync(string address, string key, CancellationToken cancellationToken)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"http://{address}:7071/admin/cache/read?key={Uri.EscapeDataString(key)}");
        request.Headers.Add("x-functions-key", _masterKey);
        using HttpResponseMessage response = await _http.SendAsync(request, cancellationToken);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"{address}: read {key}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync(cancellationToken)}");
        }

        return (await response.Content.ReadFromJsonAsync<HostCacheRead>(Json, cancellationToken))!;
    }

    private async Task RemoveAsync(string address, string key, CancellationToken cancellationToken)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"http://{address}:7071/admin/cache/remove?key={Uri.EscapeDataString(key)}");
        request.Headers.Add("x-functions-key", _masterKey);
        using HttpResponseMessage response = await _http.SendAsync(request, cancellationToken);
        response.EnsureSuccessStatusCode();
    }
}
