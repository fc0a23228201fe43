using FaaSCache.Keda;

namespace FaaSCache.ScaleController.Status;

/// <summary>The controller's current decision as <see cref="IScaleDecisions"/> (what the KEDA face serves).</summary>
public sealed class ScaleDecisionState(ScaleControllerOptions options) : IScaleDecisions
{
    private readonly Lock _gate = new();
    private int _desired;
    private bool _active;
    private string _reason = "no decision yet";

    /// <inheritdoc />
    public event EventHandler? Changed;

    /// <inheritdoc />
    public string AppName => options.AppName;

    /// <inheritdoc />
    public int DesiredInstances
    {
        get
        {
            lock (_gate)
            {
                return _desired;
            }
        }
    }

    /// <inheritdoc />
    public bool IsActive
    {
        get
        {
            lock (_gate)
            {
                return _active;
            }
        }
    }

    /// <inheritdoc />
    public string Reason
    {
        get
        {
            lock (_gate)
            {
                return _reason;
            }
        }
    }

    /// <summary>Publishes <paramref name="decision"/>; raises <see cref="Changed"/> when the count or the activity changed.</summary>
    public void Update(ScaleDecision decision, int pendingRequests)
    {
        ArgumentNullException.ThrowIfNull(decision);
        bool changed;
        lock (_gate)
        {
            bool active = decision.To > 0 || pendingRequests > 0;
            changed = decision.To != _desired || active != _active;
            _desired = decision.To;
            _active = active;
            _reason = decision.Reason;
        }

        if (changed)
        {
            Changed?.Invoke(this, EventArgs.Empty);
        }
    }
}
