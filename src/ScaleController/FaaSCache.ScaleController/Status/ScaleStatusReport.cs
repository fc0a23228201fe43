namespace FaaSCache.ScaleController.Status;

/// <summary>The answer of <c>GET /scale/status</c>: the instances, their last votes, and why the count is what it is.</summary>
/// <param name="App">The app.</param>
/// <param name="Mode">Where the instances come from: launch (this controller runs them) or membership (found in the membership blob; KEDA runs them).</param>
/// <param name="Current">Instances starting or ready (membership: listed in the blob).</param>
/// <param name="Desired">The count the last decision wants.</param>
/// <param name="Active">Whether the app is active (instances wanted, requests held or in flight).</param>
/// <param name="Reason">The last decision's reason.</param>
/// <param name="MinInstances">The lower bound.</param>
/// <param name="MaxInstances">The upper bound.</param>
/// <param name="HeldRequests">Requests held for a cold start now.</param>
/// <param name="PendingRequests">Requests held or in flight at the front door now.</param>
/// <param name="LastRequest">When the front door last saw a request.</param>
/// <param name="InstanceLoadSeconds">The measured instance start time (T_Load), or null when not known.</param>
/// <param name="InstanceLoadNote">What T_Load is, or why it is not known.</param>
/// <param name="Votes">The last poll's aggregate.</param>
/// <param name="Instances">The current instances, then the recently ended ones.</param>
/// <param name="Decisions">The decision history, oldest first.</param>
/// <param name="KeepAlive">How the idle app is unloaded and reloaded: the mode, the windows, the histogram's state.</param>
public sealed record ScaleStatusReport(
    string App,
    string Mode,
    int Current,
    int Desired,
    bool Active,
    string Reason,
    int MinInstances,
    int MaxInstances,
    int HeldRequests,
    int PendingRequests,
    DateTimeOffset? LastRequest,
    double? InstanceLoadSeconds,
    string InstanceLoadNote,
    AggregatedVote? Votes,
    IReadOnlyList<InstanceStatus> Instances,
    IReadOnlyList<ScaleDecision> Decisions,
    KeepAliveStatus? KeepAlive = null);

/// <summary>One instance in the status.</summary>
/// <param name="Id">Its id.</param>
/// <param name="State">starting, ready, draining, stopping, stopped or failed.</param>
/// <param name="Pid">Its host process id, once launched and ready.</param>
/// <param name="HttpEndpoint">Its HTTP address.</param>
/// <param name="PeerEndpoint">Its peer (vote) address.</param>
/// <param name="LoadSeconds">Its measured launch-to-ready time (T_Load).</param>
/// <param name="InFlight">Requests the front door has in flight to it.</param>
/// <param name="LastVotes">Its last poll's answer.</param>
/// <param name="Error">Why it failed.</param>
public sealed record InstanceStatus(
    string Id,
    string State,
    int? Pid,
    Uri? HttpEndpoint,
    Uri? PeerEndpoint,
    double? LoadSeconds,
    int InFlight,
    InstanceVotes? LastVotes,
    string? Error);
