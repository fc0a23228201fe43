using System.Net.Http.Json;
using System.Text.RegularExpressions;
using FaaSCache.Host.Admin;

namespace FaaSCache.Pods.Tests;

/// <summary>
/// <c>scripts/pods.sh</c> for one app in a state folder of its own (FAASCACHE_PODS_DIR) with an image tag of its own
/// (FAASCACHE_IMAGE_TAG), and the pods it runs: their addresses, keys, storage and admin routes.
/// </summary>
public sealed partial class PodsScript : IAsyncDisposable
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);
    private readonly string _state = Directory.CreateTempSubdirectory("faascache-pods-test-").FullName;
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(60) };
    private readonly ITestOutputHelper _output;

    /// <summary>Initializes a new instance of the <see cref="PodsScript"/> class for the app in <paramref name="appFolder"/>.</summary>
    public PodsScript(string appFolder, ITestOutputHelper output)
    {
        AppFolder = appFolder;
        Name = Path.GetFileName(appFolder);
        Tag = $"test-{Guid.NewGuid():N}"[..13];
        _output = output;
    }

    /// <summary>Gets the app folder.</summary>
    public string AppFolder { get; }

    /// <summary>Gets the app's name (the folder's, a DNS label already).</summary>
    public string Name { get; }

    /// <summary>Gets the tag of the app image this run builds (removed at the end).</summary>
    public string Tag { get; }

    /// <summary>Gets the folder of the app's state (.artifacts/pods/APP in normal use).</summary>
    public string Folder => Path.Combine(_state, Name);

    /// <summary>Runs <c>scripts/pods.sh</c> with <paramref name="arguments"/>.</summary>
    public async Task<ProcessRun> RunAsync(TimeSpan timeout, params string[] arguments)
    {
        ProcessRun run = await ProcessRun.RunAsync(
            "bash",
            [Path.Combine(RepositoryRoot.Find(), "scripts", "pods.sh"), .. arguments],
            timeout,
            new Dictionary<string, string> { ["FAASCACHE_PODS_DIR"] = _state, ["FAASCACHE_IMAGE_TAG"] = Tag });
        _output.WriteLine($"$ pods.sh {string.Join(' ', arguments)} -> {run.ExitCode}{Environment.NewLine}{run.Stdout}{run.Stderr}");
        return run;
    }

    /// <summary>Gets the storage connection the pods use (Azurite on the pods' network, reachable from this machine).</summary>
    public string Storage => File.ReadAllLines(Path.Combine(Folder, "storage.env")).Single(l => l.StartsWith("AzureWebJobsStorage=", StringComparison.Ordinal))["AzureWebJobsStorage=".Length..];

    /// <summary>Gets the app's master key (the keys Secret the manifests carry).</summary>
    public string MasterKey => File.ReadAllLines(Path.Combine(Folder, "podman", "keys.env")).Single(l => l.StartsWith("master=", StringComparison.Ordinal))["master=".Length..];

    /// <summary>The host pods <c>pods.sh status</c> lists: name, address, status.</summary>
    public async Task<IReadOnlyList<HostPod>> PodsAsync()
    {
        ProcessRun status = await RunAsync(TimeSpan.FromSeconds(60), "status", Name);
        Assert.True(status.ExitCode == 0, status.ToString());
        return [.. StatusLine().Matches(status.Stdout).Select(m => new HostPod(m.Groups["pod"].Value, m.Groups["ip"].Value, JsonSerializer.Deserialize<HostStatus>(m.Groups["json"].Value, Json)!))];
    }

    /// <summary><c>POST /admin/cache/read?key=</c> on <paramref name="pod"/>: where the read came from.</summary>
    public async Task<HostCacheRead> ReadAsync(HostPod pod, string key)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, $"http://{pod.Address}:7071/admin/cache/read?key={Uri.EscapeDataString(key)}");
        request.Headers.Add("x-functions-key", MasterKey);
        using HttpResponseMessage response = await _http.SendAsync(request);
        string body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"{pod.Name}: read {key}: {(int)response.StatusCode} {body}");
        return JsonSerializer.Deserialize<HostCacheRead>(body, Json)!;
    }

    /// <summary>A GET through the front door (the last line of <c>up</c>).</summary>
    public async Task<(HttpStatusCode Status, string Body)> GetAsync(Uri url)
    {
        using HttpResponseMessage response = await _http.GetAsync(url);
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }

    /// <summary>A container engine command (the script's own containers.conf), for checks and clean-up.</summary>
    public async Task<ProcessRun> PodmanAsync(params string[] arguments) =>
        await ProcessRun.RunAsync(
            "bash",
            ["-c", "source \"$1\" && shift && podman_ \"$@\"", "podman", Path.Combine(RepositoryRoot.Find(), "scripts", "lib", "podman.sh"), .. arguments],
            TimeSpan.FromSeconds(120));

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (Directory.Exists(Folder))
        {
            await RunAsync(TimeSpan.FromSeconds(180), "down", Name);
        }

        await PodmanAsync("rmi", "-f", $"localhost/faascache-app-{Name}:{Tag}");
        _http.Dispose();
        Directory.Delete(_state, recursive: true);
    }

    [GeneratedRegex(@"(?m)^(?<pod>\S+) (?<ip>\d+\.\d+\.\d+\.\d+) (?<json>\{.*\})$")]
    private static partial Regex StatusLine();
}

/// <summary>A host pod: its name, its address on the pods' network and its <c>/admin/host/status</c>.</summary>
public sealed record HostPod(string Name, string Address, HostStatus Status);
