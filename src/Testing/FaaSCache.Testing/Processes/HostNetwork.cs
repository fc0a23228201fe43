namespace FaaSCache.Testing;

/// <summary>
/// Where a host process runs on the network: <paramref name="Wrap"/> turns its start info into one that runs it there
/// (e.g. <c>ip netns exec</c> into a network namespace), it listens (HTTP and peers) on <paramref name="Address"/>, which
/// the caller reaches, and it reaches storage with <paramref name="StorageConnection"/> when that is given.
/// </summary>
/// <param name="Address">The host's address (<c>--listen-address</c>, <c>--peer-address</c>).</param>
/// <param name="Wrap">Makes the start info that runs the host in its place; the process id must stay the host's.</param>
/// <param name="StorageConnection">The storage connection string as seen from there; null: the caller's own.</param>
public sealed record HostNetwork(IPAddress Address, Func<ProcessStartInfo, ProcessStartInfo> Wrap, string? StorageConnection = null);
