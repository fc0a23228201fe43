namespace FaaSCache.Prewarm;

/// <summary>Source-generated JSON of the snapshot blobs (camelCase).</summary>
[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase, WriteIndented = false)]
[JsonSerializable(typeof(UnloadSnapshot))]
internal sealed partial class PrewarmJsonContext : JsonSerializerContext;
