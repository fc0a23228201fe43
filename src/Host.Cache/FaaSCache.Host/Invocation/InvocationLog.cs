using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.Host.Invocation;

/// <summary>The last invocations and running totals, for the admin endpoint and tests; each also goes to the <c>--access-log</c> file when one is set.</summary>
/// <param name="accessLog">The access log, when <c>--access-log</c> names one.</param>
/// <param name="logger">Where a failed append is reported (the invocation is not failed for it).</param>
public sealed class InvocationLog(AccessLog? accessLog = null, ILogger<InvocationLog>? logger = null)
{
    private const int Capacity = 500;
    private readonly Lock _gate = new();
    private readonly LinkedList<InvocationRecord> _recent = new();
    private long _succeeded;
    private long _failed;
    private long _bytesCopied;

    /// <summary>Gets the invocations that succeeded.</summary>
    public long Succeeded => Interlocked.Read(ref _succeeded);

    /// <summary>Gets the invocations that failed.</summary>
    public long Failed => Interlocked.Read(ref _failed);

    /// <summary>Gets the bytes the host copied to deliver inputs and store outputs.</summary>
    public long BytesCopied => Interlocked.Read(ref _bytesCopied);

    /// <summary>Adds a finished invocation.</summary>
    public void Add(InvocationRecord record)
    {
        Interlocked.Increment(ref record.Status == "succeeded" ? ref _succeeded : ref _failed);
        Interlocked.Add(ref _bytesCopied, record.Inputs.Sum(i => i.BytesCopied) + record.Outputs.Sum(o => o.BytesCopied));
        lock (_gate)
        {
            _recent.AddLast(record);
            if (_recent.Count > Capacity)
            {
                _recent.RemoveFirst();
            }
        }

        try
        {
            accessLog?.Append(record);
        }
        catch (IOException e)
        {
            (logger ?? NullLogger<InvocationLog>.Instance).LogWarning("Invocation {Id} was not written to the access log {Path}: {Reason}", record.InvocationId, accessLog!.Path, e.Message);
        }
    }

    /// <summary>The most recent invocations, newest last.</summary>
    public IReadOnlyList<InvocationRecord> Recent(string? function = null)
    {
        lock (_gate)
        {
            return _recent.Where(r => function is null || string.Equals(r.Function, function, StringComparison.OrdinalIgnoreCase)).ToList();
        }
    }
}
