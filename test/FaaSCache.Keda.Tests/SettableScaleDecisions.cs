using FaaSCache.Keda;

namespace FaaSCache.Keda.Tests;

/// <summary>The seam's simplest implementation: decisions the test sets, raising <see cref="Changed"/> as the controller does.</summary>
internal sealed class SettableScaleDecisions(string appName) : IScaleDecisions
{
    private readonly Lock _gate = new();
    private int _desired;
    private bool _active;
    private string _reason = "not decided yet";
    private EventHandler? _changed;
    private TaskCompletionSource _allUnsubscribed = new(TaskCreationOptions.RunContinuationsAsynchronously);

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

    public event EventHandler? Changed
    {
        add
        {
            lock (_gate)
            {
                _changed += value;
                if (_allUnsubscribed.Task.IsCompleted)
                {
                    _allUnsubscribed = new(TaskCreationOptions.RunContinuationsAsynchronously);
                }
            }
        }

        remove
        {
            lock (_gate)
            {
                _changed -= value;
                if (_changed is null)
                {
                    _allUnsubscribed.TrySetResult();
                }
            }
        }
    }

    /// <summary>Gets the number of handlers subscribed to <see cref="Changed"/> (open StreamIsActive calls).</summary>
    public int Subscribers
    {
        get { lock (_gate) { return _changed?.GetInvocationList().Length ?? 0; } }
    }

    /// <summary>Completes when the last handler has unsubscribed (a stream's server side has ended).</summary>
    public Task AllUnsubscribed
    {
        get { lock (_gate) { return _allUnsubscribed.Task; } }
    }

    /// <summary>Sets the decision and raises <see cref="Changed"/>.</summary>
    public void Set(int desiredInstances, bool isActive, string reason)
    {
        lock (_gate)
        {
            _desired = desiredInstances;
            _active = isActive;
            _reason = reason;
        }

        EventHandler? changed;
        lock (_gate)
        {
            changed = _changed;
        }

        changed?.Invoke(this, EventArgs.Empty);
    }
}
