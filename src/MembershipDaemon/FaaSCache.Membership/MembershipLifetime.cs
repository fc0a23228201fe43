namespace FaaSCache.Membership;

/// <summary>
/// Joins the app's membership once the server (and so the peer service) listens, and leaves it as soon as
/// the host begins to stop, so the other instances stop routing keys here before the server closes.
/// </summary>
internal sealed class MembershipLifetime(MembershipDaemon daemon) : IHostedLifecycleService
{
    /// <inheritdoc />
    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StartedAsync(CancellationToken cancellationToken) => daemon.StartAsync(cancellationToken);

    /// <inheritdoc />
    public Task StoppingAsync(CancellationToken cancellationToken) => daemon.StopAsync(cancellationToken);

    /// <inheritdoc />
    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
