using System.Collections.Concurrent;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text.Json;
using FaaSCache.Host.AppModel;
using FaaSCache.Storage;
using Google.Protobuf;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

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

    private static readonly ConcurrentDictionary<(string Assembly, string EntryPoint), IReadOnlyDictionary<string, string>?> ParameterTypes = new();

    /// <summary>True when <paramref name="binding"/> of <paramref name="function"/> is an SDK-type blob input.</summary>
    public static bool Wants(FunctionDefinition function, BindingDefinition binding)
    {
        ArgumentNullException.ThrowIfNull(function);
        ArgumentNullException.ThrowIfNull(binding);
        if (!binding.IsBlob || binding.Direction == BindingDirection.Out
            || !(binding.Raw["properties"] is System.Text.Json.Nodes.JsonObject p && p["supportsDeferredBinding"]?.ToString() is { } d && d.Equals("true", StringComparison.OrdinalIgnoreCase)))
        {
            return false;
        }

        if (!string.Equals(function.Language, "dotnet-isolated", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        return ParameterTypeOf(function, binding.Name) is { } type && IsSdkType(type);
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

    /// <summary>The type of a C# isolated function's parameter, read from its assembly's metadata; null when it cannot be read.</summary>
    public static string? ParameterTypeOf(FunctionDefinition function, string parameter)
    {
        ArgumentNullException.ThrowIfNull(function);
        string assembly = Path.IsPathRooted(function.ScriptFile) ? function.ScriptFile : Path.Combine(function.Directory, function.ScriptFile);
        IReadOnlyDictionary<string, string>? types = ParameterTypes.GetOrAdd((assembly, function.EntryPoint), k => Read(k.Assembly, k.EntryPoint));
        return types is not null && types.TryGetValue(parameter, out string? type) ? type : null;
    }

    /// <summary>Gets why the last assembly could not be read (for the host's message when a worker cannot convert an input).</summary>
    public static string? LastError { get; private set; }

    private static Dictionary<string, string>? Read(string assemblyPath, string entryPoint)
    {
        int dot = entryPoint.LastIndexOf('.');
        if (!File.Exists(assemblyPath) || dot <= 0)
        {
            LastError = $"{assemblyPath}: no such assembly, or entry point '{entryPoint}' names no method";
            return null;
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
            return method?.GetParameters().Where(p => p.Name is not null).ToDictionary(p => p.Name!, p => p.ParameterType.FullName ?? p.ParameterType.Name, StringComparer.Ordinal);
        }
        catch (Exception e) when (e is FileNotFoundException or FileLoadException or BadImageFormatException or TypeLoadException or ArgumentException or InvalidOperationException)
        {
            LastError = $"{assemblyPath}: {e.GetType().Name}: {e.Message}";
            return null;
        }
    }
}
