using FaaSCache.Host.Bindings;
using FaaSCache.Host.Invocation;

namespace FaaSCache.Host.Tests.Bindings;

/// <summary>Which blob inputs get ModelBindingData: SDK types only (read from a C# app's assembly; marked by Python and Node).</summary>
[Trait("Category", "Unit")]
public sealed class DeferredBindingTests
{
    [Fact]
    public void a_csharp_isolated_apps_parameter_types_are_read_from_its_build_output()
    {
        string output = DotnetBuildOutput.Find("samples", "thumbnail-dotnet");
        FunctionDefinition info = Function(output, "ThumbnailDotnet.PhotoInfo.Run", "dotnet-isolated", "photo", "photoClient");
        FunctionDefinition thumbnail = Function(output, "ThumbnailDotnet.Thumbnail.Run", "dotnet-isolated", "photo");

        ParameterTypeReading photo = DeferredBinding.ParameterTypeOf(info, "photo");
        Assert.True(photo.Type == "System.IO.Stream", photo.Error);
        Assert.Equal(new ParameterTypeReading("Azure.Storage.Blobs.BlobClient", null), DeferredBinding.ParameterTypeOf(info, "photoClient"));
        Assert.All(info.Bindings, b => Assert.Equal(new DeferredBindingDecision(true, null), info.DeferredDecisionOf(b)));
        Assert.Equal("System.Byte[]", DeferredBinding.ParameterTypeOf(thumbnail, "photo").Type);
        Assert.Equal(new DeferredBindingDecision(false, null), thumbnail.DeferredDecisionOf(thumbnail.Bindings[0]));
    }

    [Fact]
    public void a_csharp_isolated_input_whose_assembly_cannot_be_read_travels_as_bytes_and_its_decision_says_why()
    {
        FunctionDefinition missing = Function("/nowhere", "Missing.Function.Run", "dotnet-isolated", "photo");
        FunctionDefinition other = Function("/elsewhere", "Other.Function.Run", "dotnet-isolated", "photo");

        DeferredBindingDecision decision = missing.DeferredDecisionOf(missing.Bindings[0]);
        DeferredBindingDecision second = other.DeferredDecisionOf(other.Bindings[0]);

        Assert.False(decision.Deferred);
        Assert.Contains("/nowhere/thumbnail-dotnet.dll: no such assembly", decision.Error, StringComparison.Ordinal);
        // Each decision carries its own error, not the last one read.
        Assert.Contains("/elsewhere/thumbnail-dotnet.dll", second.Error, StringComparison.Ordinal);
        Assert.Equal(decision, missing.DeferredDecisionOf(missing.Bindings[0]));
    }

    [Fact]
    public void a_worker_that_cannot_convert_a_blob_sent_as_bytes_is_told_which_input_and_why()
    {
        FunctionDefinition missing = Function("/nowhere", "Missing.Function.Run", "dotnet-isolated", "photo");
        const string WorkerError = "Cannot convert input parameter 'photo' to type 'System.IO.Stream' from type 'System.Byte[]'.";

        string hint = FunctionInvoker.DeferredBindingHint(missing, WorkerError);

        Assert.Contains("blob input 'photo' as bytes", hint, StringComparison.Ordinal);
        Assert.Contains("/nowhere/thumbnail-dotnet.dll: no such assembly", hint, StringComparison.Ordinal);
        Assert.Empty(FunctionInvoker.DeferredBindingHint(missing, "Something else failed"));
        FunctionDefinition python = Function("/nowhere", "main", "python", ["blob"], "true");
        Assert.Empty(FunctionInvoker.DeferredBindingHint(python, WorkerError));
    }

    [Theory]
    [InlineData("python", "true", true)]
    [InlineData("python", "false", false)]
    [InlineData("node", "True", true)]
    [InlineData("node", null, false)]
    public void python_and_node_inputs_follow_the_workers_mark(string language, string? mark, bool expected)
    {
        FunctionDefinition f = Function("/nowhere", "main", language, ["blob"], mark);
        Assert.Equal(new DeferredBindingDecision(expected, null), f.DeferredDecisionOf(f.Bindings[0]));
    }

    [Theory]
    [InlineData("System.IO.Stream", true)]
    [InlineData("Azure.Storage.Blobs.Specialized.BlockBlobClient", true)]
    [InlineData("Azure.Storage.Blobs.BlobClient[]", true)]
    [InlineData("System.Collections.Generic.IEnumerable`1[[Azure.Storage.Blobs.BlobClient, Azure.Storage.Blobs, Version=12.0.0.0]]", true)]
    [InlineData("System.Byte[]", false)]
    [InlineData("System.String", false)]
    public void sdk_types_are_told_from_the_rest(string type, bool expected) => Assert.Equal(expected, DeferredBinding.IsSdkType(type));

    private static FunctionDefinition Function(string directory, string entryPoint, string language, string[] inputs, string? mark = "True") => new()
    {
        Name = "f",
        Directory = directory,
        ScriptFile = "thumbnail-dotnet.dll",
        EntryPoint = entryPoint,
        Language = language,
        Bindings = [.. inputs.Select(name => new BindingDefinition
        {
            Name = name,
            Type = "blob",
            Direction = BindingDirection.In,
            Path = "photos/{name}",
            Raw = new JsonObject { ["properties"] = mark is null ? new JsonObject() : new JsonObject { ["supportsDeferredBinding"] = mark } },
        })],
    };

    private static FunctionDefinition Function(string directory, string entryPoint, string language, params string[] inputs) => Function(directory, entryPoint, language, inputs, "True");
}
