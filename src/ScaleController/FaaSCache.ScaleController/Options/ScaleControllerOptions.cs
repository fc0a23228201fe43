namespace FaaSCache.ScaleController.Options;

/// <summary>
/// What the scale controller runs and how it scales: the app, its storage, the instance bounds and the timing rules
/// (§4's poll, the platform's HTTP cool-downs, idle to zero). Checked by <see cref="ScaleControllerOptionsValidator"/>.
/// </summary>
public sealed class ScaleControllerOptions
{
    /// <summary>Gets or sets where the instances come from: launched here (default) or found in the membership blob (Kubernetes, KEDA runs them).</summary>
    public InstanceSourceMode Instances { get; set; } = InstanceSourceMode.Launch;

    /// <summary>Gets or sets the function app folder every instance runs (<c>--script-root</c> of the host). Required in launch mode.</summary>
    public string ScriptRoot { get; set; } = "";

    /// <summary>Gets or sets the app name (the instances' <c>--app-name</c>; ids are <c>&lt;app&gt;-N</c>). Required.</summary>
    public string AppName { get; set; } = "";

    /// <summary>Gets or sets the app's storage connection string (the instances' <c>AzureWebJobsStorage</c>; derives the peer key). Required.</summary>
    public string StorageConnection { get; set; } = "";

    /// <summary>Gets or sets the fewest instances kept running (0 lets an idle app scale to zero).</summary>
    public int MinInstances { get; set; }

    /// <summary>Gets or sets the most instances ever run (1..64).</summary>
    public int MaxInstances { get; set; } = 6;

    /// <summary>Gets or sets how often every live instance is asked for its votes.</summary>
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Gets or sets the least time between two scale-outs (the platform's HTTP rule: one new instance a second).</summary>
    public TimeSpan ScaleOutCooldown { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Gets or sets the least time after any change before an instance is removed.</summary>
    public TimeSpan ScaleInCooldown { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Gets or sets how long an app must go without front-door requests (every vote in) before it scales to zero.</summary>
    public TimeSpan IdleToZero { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>Gets or sets how an idle app is unloaded and reloaded: fixed (<see cref="IdleToZero"/>) or the hybrid histogram.</summary>
    public KeepAliveMode KeepAlive { get; set; } = KeepAliveMode.Fixed;

    /// <summary>Gets the hybrid histogram's settings (used with <see cref="KeepAlive"/> histogram).</summary>
    public HybridHistogramOptions Histogram { get; init; } = new();

    /// <summary>Gets or sets how long the histogram's state waits after a change before it is written to its blob (changes in between are written together).</summary>
    public TimeSpan HistogramSaveDelay { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Gets or sets how long the front door holds a request while a cold start brings the first instance up.</summary>
    public TimeSpan HoldTimeout { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>Gets or sets how long a draining instance may take to finish its in-flight requests before it is stopped anyway.</summary>
    public TimeSpan DrainTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Gets or sets how long an instance may take from launch to ready (workers running) before it counts as failed.</summary>
    public TimeSpan StartTimeout { get; set; } = TimeSpan.FromSeconds(90);

    /// <summary>Gets or sets how long a stopping instance has after SIGTERM before it is killed.</summary>
    public TimeSpan StopTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Gets or sets the FaaSCache host to run (<c>FaaSCache.Host.dll</c>). Required in launch mode, must exist.</summary>
    public string HostDll { get; set; } = "";

    /// <summary>Gets or sets the address the front door, the status and the gRPC service listen on, and instances bind to.</summary>
    public IPAddress ListenAddress { get; set; } = IPAddress.Loopback;

    /// <summary>Gets or sets the front door's HTTP port (<c>/api/*</c>, <c>/scale/status</c>); 0 picks a free one.</summary>
    public int Port { get; set; } = 8080;

    /// <summary>Gets or sets the gRPC port (HTTP/2: urgent votes, the KEDA face); 0 picks a free one.</summary>
    public int GrpcPort { get; set; } = 8081;

    /// <summary>
    /// Gets or sets the members' HTTP port in membership mode: when set, the front door routes <c>/api/*</c> to the
    /// members of the app's membership blob at their advertised address and this port (what a Service does in a cluster;
    /// on an engine without Services, e.g. podman's kube play, the controller is the app's way in). Null: no front door.
    /// </summary>
    public int? MemberHttpPort { get; set; }

    /// <summary>Gets or sets the root under which every instance gets its own shared-memory folder.</summary>
    public string SharedMemoryRoot { get; set; } = "/dev/shm";

    /// <summary>
    /// Gets or sets a value indicating whether each instance runs in its own network namespace behind a shaped veth link
    /// (FaaSCache.NetworkEmulation; needs root, <see cref="ListenAddress"/> 0.0.0.0 and storage listening on 0.0.0.0).
    /// </summary>
    public bool NetworkNamespaces { get; set; }

    /// <summary>Gets or sets each instance link's rate limit in bytes per second, both ways (§6: 90 MB/s); null: unshaped. Only with <see cref="NetworkNamespaces"/>.</summary>
    public long? LinkRateBytesPerSecond { get; set; }

    /// <summary>Gets or sets the prefix of the namespaces and interfaces made (<c>&lt;prefix&gt;-N</c>); leftovers with it are removed at start.</summary>
    public string NamespacePrefix { get; set; } = "fcscale";

    /// <summary>Gets or sets the size of the decision history kept for the status.</summary>
    public int HistorySize { get; set; } = 200;

    /// <summary>
    /// Gets or sets a value indicating whether keys are enforced: <c>/scale/status</c> needs the app's master key, and
    /// launched instances run with <c>--auth on</c> (the controller sends the master key to their admin routes); off for
    /// local development only.
    /// </summary>
    public bool EnforceKeys { get; set; } = true;
}
