namespace FaaSCache.Host.Workers;

/// <summary>
/// Whether a worker can be handed blob inputs in shared memory. The capability (<c>SharedMemoryDataTransfer</c>) is
/// what a worker says; a few say it and cannot: the Python worker's runtime for Python 3.13 and later (the
/// <c>azure_functions_runtime</c> library of azure-functions-python-worker's runtimes/v2) advertises the capability, but
/// its <c>bindings/meta.py</c> takes only <c>data</c> and raises <c>TypeError('Unknown ParameterBindingType')</c> for
/// <c>rpc_shared_memory</c>. The stock host keeps shared memory off unless an app setting turns it on; this host turns it
/// on with the cache, so it must not believe such a worker: it gets the bytes in the message, as with the cache off.
/// </summary>
public static class WorkerSharedMemory
{
    /// <summary>The first Python version whose worker runs the v2 library runtime.</summary>
    public static readonly Version PythonLibraryRuntime = new(3, 13);

    /// <summary>Whether blob inputs may go to this worker as shared memory, and why not when they may not.</summary>
    public static (bool Reads, string? WhyNot) Decide(IReadOnlyDictionary<string, string> capabilities, WorkerMetadata? metadata)
    {
        ArgumentNullException.ThrowIfNull(capabilities);
        if (!capabilities.TryGetValue(FaaSCache.Host.Invocation.FunctionInvoker.SharedMemoryCapability, out string? can)
            || !string.Equals(can, "true", StringComparison.OrdinalIgnoreCase))
        {
            return (false, "it does not advertise SharedMemoryDataTransfer");
        }

        if (string.Equals(metadata?.RuntimeName, "python", StringComparison.OrdinalIgnoreCase)
            && Version.TryParse(metadata!.RuntimeVersion, out Version? python) && python >= PythonLibraryRuntime)
        {
            return (false, $"Python {metadata.RuntimeVersion}'s worker (the azure_functions_runtime library, worker version {metadata.WorkerVersion}) advertises SharedMemoryDataTransfer but reads only data, not rpc_shared_memory");
        }

        return (true, null);
    }
}
