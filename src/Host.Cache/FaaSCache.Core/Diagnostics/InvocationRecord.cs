namespace FaaSCache.Diagnostics;

/// <summary>How one input reached the worker.</summary>
/// <param name="Binding">The binding name.</param>
/// <param name="Key">The blob key.</param>
/// <param name="Source">lh, lm, rh, rm, bypass, storage (cache off) or missing.</param>
/// <param name="MapName">The shared-memory map handed to the worker, if any.</param>
/// <param name="Bytes">The content length.</param>
/// <param name="BytesCopied">Bytes the host wrote in memory to deliver it (0 for a local hit).</param>
/// <param name="Version">The version (ETag) read, when known.</param>
public sealed record InputRecord(string Binding, string Key, string Source, string? MapName, long Bytes, long BytesCopied, string? Version = null);

/// <summary>What happened to one output.</summary>
/// <param name="Binding">The binding name.</param>
/// <param name="Key">The blob key.</param>
/// <param name="MapName">The worker's map, when the output came over shared memory.</param>
/// <param name="Bytes">The content length.</param>
/// <param name="Adopted">True when the cache took the worker's map as it was (no copy).</param>
/// <param name="Persisted">True when storage had it when the invocation ended.</param>
/// <param name="BytesCopied">Bytes the host copied to store it.</param>
/// <param name="Version">The version (ETag, or the cache's pending version) written.</param>
public sealed record OutputRecord(string Binding, string Key, string? MapName, long Bytes, bool Adopted, bool Persisted, long BytesCopied, string? Version = null);

/// <summary>One invocation, as the host's admin endpoint <c>/admin/invocations</c> reports it (and its readers read it back).</summary>
public sealed class InvocationRecord
{
    /// <summary>Gets the invocation id.</summary>
    public required string InvocationId { get; init; }

    /// <summary>Gets the function name.</summary>
    public required string Function { get; init; }

    /// <summary>Gets what triggered it (http, blob, cache).</summary>
    public required string Trigger { get; init; }

    /// <summary>Gets the start time.</summary>
    public DateTimeOffset StartedAt { get; init; } = DateTimeOffset.UtcNow;

    /// <summary>Gets or sets the duration in milliseconds.</summary>
    public double DurationMs { get; set; }

    /// <summary>Gets or sets the outcome: running, succeeded, failed.</summary>
    public string Status { get; set; } = "running";

    /// <summary>Gets or sets the error message of a failed invocation.</summary>
    public string? Error { get; set; }

    /// <summary>Gets or sets, for a function whose results are cached, <c>hit</c> (answered without running) or <c>miss</c> (run); null otherwise.</summary>
    public string? Result { get; set; }

    /// <summary>Gets or sets where the result was looked for: <c>local</c>, <c>cluster (this instance owns it)</c>, <c>cluster (owner X)</c> or <c>redis</c>.</summary>
    public string? ResultFrom { get; set; }

    /// <summary>Gets the inputs.</summary>
    [JsonObjectCreationHandling(JsonObjectCreationHandling.Populate)]
    public List<InputRecord> Inputs { get; } = [];

    /// <summary>Gets the outputs.</summary>
    [JsonObjectCreationHandling(JsonObjectCreationHandling.Populate)]
    public List<OutputRecord> Outputs { get; } = [];

    /// <summary>The input record of binding <paramref name="binding"/>; throws when there is none.</summary>
    public InputRecord Input(string binding) =>
        Inputs.FirstOrDefault(i => string.Equals(i.Binding, binding, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"Invocation {InvocationId} of '{Function}' has no input '{binding}' (inputs: {string.Join(", ", Inputs.Select(i => i.Binding))}).");

    /// <summary>The output record of binding <paramref name="binding"/>; throws when there is none.</summary>
    public OutputRecord Output(string binding) =>
        Outputs.FirstOrDefault(o => string.Equals(o.Binding, binding, StringComparison.OrdinalIgnoreCase))
        ?? throw new InvalidOperationException($"Invocation {InvocationId} of '{Function}' has no output '{binding}' (outputs: {string.Join(", ", Outputs.Select(o => o.Binding))}).");
}
