using System.Collections.Concurrent;

namespace FaaSCache.Security.Ports;

/// <summary>Which role each listening port carries (a port with no role carries nothing).</summary>
public sealed class PortRoles
{
    private readonly ConcurrentDictionary<int, ListenerRole> _roles = new();

    /// <summary>Gives <paramref name="port"/> its role; a port has one role only.</summary>
    /// <exception cref="InvalidOperationException">The port has another role already.</exception>
    public PortRoles Add(int port, ListenerRole role)
    {
        ArgumentNullException.ThrowIfNull(role);
        ListenerRole existing = _roles.GetOrAdd(port, role);
        if (existing != role)
        {
            throw new InvalidOperationException($"Port {port} would carry both {existing} and {role}; each port carries one role's services only.");
        }

        return this;
    }

    /// <summary>The port that carries <paramref name="role"/>.</summary>
    /// <exception cref="InvalidOperationException">No port carries it.</exception>
    public int PortOf(ListenerRole role) =>
        _roles.FirstOrDefault(p => p.Value == role) is { Value: not null } found ? found.Key : throw new InvalidOperationException($"No port carries {role}.");

    /// <summary>The role of a local port, or null.</summary>
    public ListenerRole? For(int localPort) => _roles.TryGetValue(localPort, out ListenerRole? role) ? role : null;
}
