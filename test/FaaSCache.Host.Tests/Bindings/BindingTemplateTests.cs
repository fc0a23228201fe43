using FaaSCache.Host.Bindings;

namespace FaaSCache.Host.Tests.Bindings;

/// <summary>Blob path templates: resolved from route/query values for inputs and outputs, matched against blob keys for triggers.</summary>
[Trait("Category", "Unit")]
public sealed class BindingTemplateTests
{
    [Fact]
    public void Resolve_fills_route_and_query_values_case_insensitively()
    {
        var values = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase) { ["name"] = "cat.jpg", ["Size"] = "large" };

        string key = new BindingTemplate("images/{size}/{Name}").Resolve(values, "image");

        Assert.Equal("images/large/cat.jpg", key);
    }

    [Fact]
    public void Resolve_without_a_value_names_the_binding_the_path_the_parameter_and_the_known_values()
    {
        var values = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase) { ["name"] = "a" };

        var e = Assert.Throws<BindingException>(() => new BindingTemplate("out/{name}-{size}.txt").Resolve(values, "result"));

        Assert.Contains("'result'", e.Message, StringComparison.Ordinal);
        Assert.Contains("out/{name}-{size}.txt", e.Message, StringComparison.Ordinal);
        Assert.Contains("no value for {size}", e.Message, StringComparison.Ordinal);
        Assert.Contains("known: name", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Resolve_fills_rand_guid_with_a_new_guid()
    {
        string key = new BindingTemplate("out/{rand-guid}").Resolve(new Dictionary<string, string>(), "result");

        Assert.True(Guid.TryParse(key["out/".Length..], out _), key);
    }

    [Fact]
    public void Match_captures_a_name_across_slashes()
    {
        Dictionary<string, string>? captures = new BindingTemplate("labelled/{name}").Match("labelled/2024/05/cam-1.jpg");

        Assert.NotNull(captures);
        Assert.Equal("2024/05/cam-1.jpg", captures["name"]);
    }

    [Theory]
    [InlineData("images/cat.png", "cat", "png")]
    [InlineData("images/a/b.jpg", "a/b", "jpg")]
    public void Match_splits_name_and_extension(string key, string name, string extension)
    {
        Dictionary<string, string>? captures = new BindingTemplate("images/{name}.{ext}").Match(key);

        Assert.NotNull(captures);
        Assert.Equal(name, captures["name"]);
        Assert.Equal(extension, captures["ext"]);
    }

    [Theory]
    [InlineData("other/cat.png")]
    [InlineData("images/noextension")]
    [InlineData("images-2/cat.png")]
    public void Match_returns_null_for_other_keys(string key)
    {
        Assert.Null(new BindingTemplate("images/{name}.{ext}").Match(key));
    }

    [Fact]
    public void The_literal_container_is_known_only_when_it_has_no_parameter()
    {
        Assert.Equal("labelled", new BindingTemplate("labelled/{name}").LiteralContainer);
        Assert.Null(new BindingTemplate("{container}/{name}").LiteralContainer);
        Assert.Equal(["container", "name"], new BindingTemplate("{container}/{name}").Parameters);
    }
}
