using Microsoft.Extensions.Primitives;

namespace FaaSCache.Host.Triggers;

/// <summary>
/// The HTTP triggers' endpoints, published after the host started (a worker indexes the functions once it runs): routing
/// rebuilds its tables when the change token fires.
/// </summary>
internal sealed class FunctionEndpointDataSource : EndpointDataSource, IDisposable
{
    private IReadOnlyList<Endpoint> _endpoints = [];
    private CancellationTokenSource _changed = new();

    /// <inheritdoc />
    public override IReadOnlyList<Endpoint> Endpoints => Volatile.Read(ref _endpoints);

    /// <inheritdoc />
    public override IChangeToken GetChangeToken() => new CancellationChangeToken(Volatile.Read(ref _changed).Token);

    /// <inheritdoc />
    public void Dispose() => _changed.Dispose();

    /// <summary>Replaces the endpoints and tells routing.</summary>
    public void Publish(IEnumerable<Endpoint> endpoints)
    {
        Volatile.Write(ref _endpoints, [.. endpoints]);
        CancellationTokenSource previous = Interlocked.Exchange(ref _changed, new CancellationTokenSource());
        previous.Cancel();
        previous.Dispose();
    }
}
