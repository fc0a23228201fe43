using FaaSCache.Host.Bindings;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// Found by the cross-app test: a route or query value with a ".." segment climbed out of the binding's container (the
/// URL collapses it), so an app's function read another container's blob. Such values are refused, naming the binding.
/// </summary>
[Trait("Category", "Unit")]
public sealed class BindingPathTests
{
    [Theory]
    [InlineData("../other/secret")]
    [InlineData("a/../../other/secret")]
    [InlineData("..\\other\\secret")]
    [InlineData("./x")]
    [InlineData("..")]
    public void A_value_with_a_dot_segment_is_refused_naming_the_binding_and_the_value(string value)
    {
        var template = new BindingTemplate("mine/{name}");
        var e = Assert.Throws<BindingException>(() => template.Resolve(new Dictionary<string, string> { ["name"] = value }, "data"));
        Assert.Contains("Binding 'data'", e.Message, StringComparison.Ordinal);
        Assert.Contains(value, e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("dir/file.png", "mine/dir/file.png")]
    [InlineData("a..b", "mine/a..b")]
    [InlineData(".hidden", "mine/.hidden")]
    public void Values_with_dots_inside_a_segment_still_resolve(string value, string expected)
        => Assert.Equal(expected, new BindingTemplate("mine/{name}").Resolve(new Dictionary<string, string> { ["name"] = value }, "data"));
}
