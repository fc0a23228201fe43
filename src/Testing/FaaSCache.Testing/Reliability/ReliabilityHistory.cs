namespace FaaSCache.Testing;

/// <summary>
/// One register operation as a client saw it: a write of <see cref="Value"/> or a read that returned <see cref="Value"/>
/// (null: the register was empty), with its invocation and completion time in <see cref="Stopwatch"/> ticks.
/// <see cref="Completed"/> is false when the client got an error or no answer: a write that may or may not have
/// taken effect (its completion is then unknown, i.e. infinite), a read that returned nothing.
/// </summary>
public sealed record RegisterOp(string Key, bool IsWrite, string? Value, long Invoked, long Returned, bool Completed, string Client)
{
    /// <summary>Gets what the client got instead of an answer when the operation failed (the host's error body, or why there was none).</summary>
    public string? Error { get; init; }

    /// <summary>Gets the completion time for ordering: infinite for a write whose outcome is unknown.</summary>
    public long EffectiveReturn => Completed ? Returned : long.MaxValue;

    /// <inheritdoc />
    public override string ToString() =>
        $"{Client} {(IsWrite ? "write" : "read")}({Key}) {(Value ?? "empty")} [{Invoked}, {(Completed ? Returned.ToString(System.Globalization.CultureInfo.InvariantCulture) : "?")}]";
}

/// <summary>Collects the operations of concurrent clients (thread-safe); times from <see cref="Stopwatch.GetTimestamp"/>.</summary>
public sealed class RegisterHistory
{
    private readonly List<RegisterOp> _ops = [];
    private readonly Lock _lock = new();

    /// <summary>Gets a snapshot of the operations recorded so far.</summary>
    public IReadOnlyList<RegisterOp> Ops
    {
        get
        {
            lock (_lock)
            {
                return [.. _ops];
            }
        }
    }

    /// <summary>Records <paramref name="op"/>.</summary>
    public void Add(RegisterOp op)
    {
        lock (_lock)
        {
            _ops.Add(op);
        }
    }
}
