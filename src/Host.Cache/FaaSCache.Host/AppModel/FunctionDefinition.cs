namespace FaaSCache.Host.AppModel;

/// <summary>One function of the app: a folder with function.json.</summary>
public sealed class FunctionDefinition
{
    /// <summary>Gets the function name (its folder name).</summary>
    public required string Name { get; init; }

    /// <summary>Gets the folder holding function.json.</summary>
    public required string Directory { get; init; }

    /// <summary>Gets the full path of the script.</summary>
    public required string ScriptFile { get; init; }

    /// <summary>Gets the entry point, or empty for the language default.</summary>
    public required string EntryPoint { get; init; }

    /// <summary>Gets the worker runtime that runs it (<c>python</c>, <c>node</c>).</summary>
    public required string Language { get; init; }

    /// <summary>Gets the bindings in function.json order.</summary>
    public required IReadOnlyList<BindingDefinition> Bindings { get; init; }

    /// <summary>Gets the trigger binding.</summary>
    public BindingDefinition Trigger => Bindings.First(b => b.IsTrigger);

    /// <summary>Gets a stable id for the worker protocol.</summary>
    public string FunctionId { get; } = Guid.NewGuid().ToString();

    /// <summary>Gets the HTTP route (<c>route</c> in function.json, else the function name), for HTTP triggers.</summary>
    public string Route => Trigger.Property("route") is { Length: > 0 } route ? route.Trim('/') : Name;

    /// <summary>Gets the allowed HTTP methods (empty: all).</summary>
    public IReadOnlyList<string> Methods =>
        Trigger.Raw["methods"] is System.Text.Json.Nodes.JsonArray methods
            ? methods.Select(m => m?.GetValue<string>().ToUpperInvariant() ?? string.Empty).Where(m => m.Length > 0).ToList()
            : [];
}
