using FaaSCache.Keda;

namespace FaaSCache.Keda.Tests;

/// <summary>The seam's simplest implementation: decisions the test sets, raising <see cref="Changed"/> as the controller does.</summary>
internal sealed class SettableScaleDecisions(string appName) : IScaleDecisions
{
    private readonly Lock _gate = new();
    private int _desired;
    private bool _active;
    private string _reason = "not decided yet";

    public string AppName { get; } = appName;

    public int DesiredInstances
    {
        get { lock (_gate) { return _desired; } }
    }

    public bool IsActive
    {
        get { lock (_gate) { return _active; } }
    }

    public string Reason
    {
        get { lock (_gate) { return _reason; } }
    }

    public event EventHandler? Changed;

    /// <summary>Sets the decision and raises <see cref="Changed"/>.</summary>
    public void Set(int desiredInstances, bool isActive, string reason)
    {
        lock (_gate)
        {
            _desired = desiredInstances;
            _active = isActive;
            _reason = reason;
        }

        Changed?.Invoke(this, EventArgs.Empty);
    }
}
