namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>A test that makes real namespaces: skipped, with the reason, only on a machine that cannot make them.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class NetworkEmulationFactAttribute : FactAttribute
{
    public NetworkEmulationFactAttribute()
    {
        if (!NetworkNamespace.IsSupported(out var why))
        {
            Skip = $"network emulation is not supported here: {why}";
        }
    }
}

/// <summary>Tests that make namespaces run one at a time: the bandwidth they measure is not shared with another test.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class NetworkNamespaceCollection
{
    public const string Name = "network namespaces";
}

/// <summary>A test of delay or loss: skipped, with the reason, where the kernel has no netem qdisc.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class NetemFactAttribute : FactAttribute
{
    public NetemFactAttribute()
    {
        if (!NetworkNamespace.IsDelayAndLossSupported(out var why))
        {
            Skip = $"delay and loss are not supported here: {why}";
        }
    }
}

/// <summary>A test of what happens without netem: runs only where namespaces work but the kernel lacks netem.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class WithoutNetemFactAttribute : FactAttribute
{
    public WithoutNetemFactAttribute()
    {
        if (!NetworkNamespace.IsSupported(out var why))
        {
            Skip = $"network emulation is not supported here: {why}";
        }
        else if (NetworkNamespace.IsDelayAndLossSupported(out _))
        {
            Skip = "this kernel has netem, so delay and loss are applied (Delay_is_added_in_each_direction_and_loss_is_configured_on_both tests them)";
        }
    }
}
