using System.Reflection;
using System.Runtime.InteropServices;

namespace FaaSCache.Host.Bindings;

/// <summary>
/// SDK-type blob inputs (a C# isolated <c>Stream</c> or <c>BlobClient</c>, the Python and Node.js SDK-type bindings)
/// get <c>ModelBindingData</c>, as the Functions host sends them: source <c>AzureStorageBlobs</c>, JSON naming the
/// connection, the container and the blob, from which the worker's blob extension builds an SDK client with the app
/// setting, which the host points at its SDK endpoint, so the worker's reads are served by the cache. Every other input
/// keeps travelling as bytes or shared memory (one copy, or none).
/// Which inputs are SDK types: Python and Node.js mark them (<c>supportsDeferredBinding</c> is true only for them); the
/// .NET Worker.Sdk marks every blob input, so for C# isolated the parameter's type is read from the function's
/// assembly (metadata only, never loaded to run).
/// </summary>
public static class DeferredBinding
{
    /// <summary>The <c>ModelBindingData.source</c> of blob bindings (the worker extensions' <c>BlobExtensionName</c>).</summary>
    public const string Source = "AzureStorageBlobs";

    private static readonly HashSet<string> SdkTypes = new(StringComparer.Ordinal)
    {
        "System.IO.Stream",
        "Azure.Storage.Blobs.BlobClient",
        "Azure.Storage.Blobs.BlobContainerClient",
        "Azure.Storage.Blobs.Specialized.BlobBaseClient",
        "Azure.Storage.Blobs.Specialized.BlockBlobClient",
        "Azure.Storage.Blobs.Specialized.PageBlobClient",
        "Azure.Storage.Blobs.Specialized.AppendBlobClient",
    };

    /// <summary>
    /// Which blob inputs of <paramref name="function"/> are SDK types, by binding name, each with why its parameter's type
    /// could not be told when the function's assembly could not be read (that input then travels as bytes). A C# isolated
    /// function's assembly is read once here; the function keeps the answer (<see cref="FunctionDefinition.DeferredDecisionOf"/>).
    /// </summary>
    public static IReadOnlyDictionary<string, DeferredBindingDecision> DecideInputs(FunctionDefinition function)
    {
        ArgumentNullException.ThrowIfNull(function);
        var decisions = new Dictionary<string, DeferredBindingDecision>(StringComparer.Ordinal);
        AssemblyReading? reading = null;
        foreach (BindingDefinition binding in function.Bindings)
        {
            if (!binding.IsBlob || binding.Direction == BindingDirection.Out || !binding.SupportsDeferredBinding)
            {
                continue;
            }

            if (!string.Equals(function.Language, "dotnet-isolated", StringComparison.OrdinalIgnoreCase))
            {
                decisions[binding.Name] = new DeferredBindingDecision(true, null);
                continue;
            }

            reading ??= Read(AssemblyOf(function), function.EntryPoint);
            ParameterTypeReading type = TypeIn(reading, function, binding.Name);
            decisions[binding.Name] = new DeferredBindingDecision(type.Type is { } t && IsSdkType(t), type.Error);
        }

        return decisions;
    }

    /// <summary>True for the SDK types, their arrays and enumerables.</summary>
    public static bool IsSdkType(string typeName)
    {
        ArgumentNullException.ThrowIfNull(typeName);
        string element = typeName.EndsWith("[]", StringComparison.Ordinal) ? typeName[..^2] : typeName;
        int generic = element.IndexOf("[[", StringComparison.Ordinal);
        if (generic > 0)
        {
            // System.Collections.Generic.IEnumerable`1[[Azure.Storage.Blobs.BlobClient, ...]]
            int end = element.IndexOf(',', generic);
            element = element[(generic + 2)..(end > 0 ? end : element.Length)];
        }

        return SdkTypes.Contains(element);
    }

    /// <summary>The <c>ModelBindingData</c> for <paramref name="key"/> (<c>container/blob</c>).</summary>
    public static TypedData ModelBindingData(BindingDefinition binding, string key)
    {
        ArgumentNullException.ThrowIfNull(binding);
        BlobKey k = BlobKey.Parse(key);
        byte[] content = JsonSerializer.SerializeToUtf8Bytes(new Dictionary<string, string>
        {
            ["Connection"] = binding.Connection is { Length: > 0 } c ? c : "AzureWebJobsStorage",
            ["ContainerName"] = k.Container,
            ["BlobName"] = k.BlobName,
        });
        return new TypedData
        {
            ModelBindingData = new ModelBindingData { Version = "1.0", Source = Source, ContentType = "application/json", Content = ByteString.CopyFrom(content) },
        };
    }

    /// <summary>
    /// The type of a C# isolated function's parameter, read from its assembly's metadata, or why it could not be read.
    /// </summary>
    public static ParameterTypeReading ParameterTypeOf(FunctionDefinition function, string parameter)
    {
        ArgumentNullException.ThrowIfNull(function);
        return TypeIn(Read(AssemblyOf(function), function.EntryPoint), function, parameter);
    }

    private static string AssemblyOf(FunctionDefinition function)
        => Path.IsPathRooted(function.ScriptFile) ? function.ScriptFile : Path.Combine(function.Directory, function.ScriptFile);

    private static ParameterTypeReading TypeIn(AssemblyReading read, FunctionDefinition function, string parameter)
        => read.Types is null ? new ParameterTypeReading(null, read.Error)
            : read.Types.TryGetValue(parameter, out string? type) ? new ParameterTypeReading(type, null)
            : new ParameterTypeReading(null, $"{AssemblyOf(function)}: '{function.EntryPoint}' has no parameter '{parameter}'");

    private static AssemblyReading Read(string assemblyPath, string entryPoint)
    {
        int dot = entryPoint.LastIndexOf('.');
        if (!File.Exists(assemblyPath) || dot <= 0)
        {
            return new AssemblyReading(null, $"{assemblyPath}: no such assembly, or entry point '{entryPoint}' names no method");
        }

        try
        {
            // The app's own assemblies first, then every shared framework of this runtime's version (ASP.NET Core's
            // HttpRequest and IActionResult are in signatures of apps with the ASP.NET Core integration).
            string runtime = RuntimeEnvironment.GetRuntimeDirectory().TrimEnd(Path.DirectorySeparatorChar);
            string version = Path.GetFileName(runtime);
            string shared = Path.GetDirectoryName(Path.GetDirectoryName(runtime)!)!;
            string[] candidates =
            [
                .. Directory.GetFiles(Path.GetDirectoryName(assemblyPath)!, "*.dll"),
                .. Directory.GetFiles(runtime, "*.dll"),
                .. Directory.GetDirectories(shared).Select(f => Path.Combine(f, version)).Where(Directory.Exists).SelectMany(d => Directory.GetFiles(d, "*.dll")),
            ];
            using var context = new MetadataLoadContext(new PathAssemblyResolver(candidates.DistinctBy(Path.GetFileName)));
            Type? type = context.LoadFromAssemblyPath(assemblyPath).GetType(entryPoint[..dot]);
            MethodInfo? method = type?.GetMethods().FirstOrDefault(m => m.Name == entryPoint[(dot + 1)..]);
            return method is null
                ? new AssemblyReading(null, $"{assemblyPath}: entry point '{entryPoint}' names no public method in it")
                : new AssemblyReading(method.GetParameters().Where(p => p.Name is not null).ToDictionary(p => p.Name!, p => p.ParameterType.FullName ?? p.ParameterType.Name, StringComparer.Ordinal), null);
        }
        catch (Exception e) when (e is FileNotFoundException or FileLoadException or BadImageFormatException or TypeLoadException or ArgumentException or InvalidOperationException)
        {
            return new AssemblyReading(null, $"{assemblyPath}: {e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>One assembly's reading: its entry point's parameter types by name, or why they could not be read.</summary>
    private sealed record AssemblyReading(IReadOnlyDictionary<string, string>? Types, string? Error);
}

/// <summary>Whether a blob input gets <c>ModelBindingData</c>, and why its parameter's type could not be told, if so.</summary>
/// <param name="Deferred">True for an SDK-type input: it gets <c>ModelBindingData</c> instead of its bytes.</param>
/// <param name="Error">Why the parameter's type could not be read from the function's assembly (the input then travels as
/// bytes); null when it was read or did not need to be.</param>
public readonly record struct DeferredBindingDecision(bool Deferred, string? Error);

/// <summary>A parameter's type read from a C# isolated function's assembly, or why it could not be read.</summary>
/// <param name="Type">The parameter's full type name; null when it could not be read.</param>
/// <param name="Error">Why it could not be read; null when it was.</param>
public readonly record struct ParameterTypeReading(string? Type, string? Error);
