namespace FaaSCache.ScaleController.Instances;

/// <summary>Stops every instance when the controller stops (registered first, so it stops after the poll loop).</summary>
public sealed class InstancePoolLifetime(InstancePool pool) : IHostedService
{
    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc />
    public async Task StopAsync(CancellationToken cancellationToken) => await pool.DisposeAsync();
}
