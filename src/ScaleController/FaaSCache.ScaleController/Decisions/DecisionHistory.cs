namespace FaaSCache.ScaleController.Decisions;

/// <summary>
/// The controller's recent decisions, newest last, bounded: every change is kept; a decision that keeps the count is
/// kept only when its reason differs from the previous one (a quiet app does not flood the history).
/// </summary>
public sealed class DecisionHistory(int capacity)
{
    private readonly Queue<ScaleDecision> _decisions = new();
    private readonly Lock _gate = new();
    private ScaleDecision? _last;

    /// <summary>Gets the latest decision, kept or not.</summary>
    public ScaleDecision? Latest
    {
        get
        {
            lock (_gate)
            {
                return _last;
            }
        }
    }

    /// <summary>Records <paramref name="decision"/>; returns true when it was kept in the history.</summary>
    public bool Add(ScaleDecision decision)
    {
        ArgumentNullException.ThrowIfNull(decision);
        lock (_gate)
        {
            bool keep = decision.Changes || _last is null || _last.Reason != decision.Reason || _last.Changes;
            _last = decision;
            if (!keep)
            {
                return false;
            }

            _decisions.Enqueue(decision);
            while (_decisions.Count > capacity)
            {
                _decisions.Dequeue();
            }

            return true;
        }
    }

    /// <summary>Gets the kept decisions, oldest first.</summary>
    public IReadOnlyList<ScaleDecision> Snapshot()
    {
        lock (_gate)
        {
            return [.. _decisions];
        }
    }
}
