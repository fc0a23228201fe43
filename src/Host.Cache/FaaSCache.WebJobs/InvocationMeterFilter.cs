using FaaSCache.Scaling;
using Microsoft.Azure.WebJobs.Host;

namespace FaaSCache.WebJobs;

#pragma warning disable CS0618 // Function filters are marked preview in WebJobs 3; they are how an extension sees invocations.

/// <summary>
/// Meters every function invocation of a WebJobs host for the compute voter (§4: request rate, in-flight invocations and
/// latency), as the FaaSCache host's invoker does.
/// </summary>
internal sealed class InvocationMeterFilter(InvocationMeter meter) : IFunctionInvocationFilter
{
    private const string PropertyName = "FaaSCache.Invocation";

    /// <inheritdoc />
    public Task OnExecutingAsync(FunctionExecutingContext executingContext, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(executingContext);
        executingContext.Properties[PropertyName] = meter.Start();
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public Task OnExecutedAsync(FunctionExecutedContext executedContext, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(executedContext);
        if (executedContext.Properties.TryGetValue(PropertyName, out object? value) && value is InvocationMeter.Invocation invocation)
        {
            if (!executedContext.FunctionResult.Succeeded)
            {
                invocation.Fail();
            }

            invocation.Dispose();
            executedContext.Properties.Remove(PropertyName);
        }

        return Task.CompletedTask;
    }
}
