namespace FaaSCache.NetworkEmulation.Tests;

[Trait("Category", "Unit")]
public sealed class NetworkNamesTests
{
    [Theory]
    [InlineData("")]
    [InlineData("Fc")]
    [InlineData("1fc")]
    [InlineData("fc_x")]
    [InlineData("fc/x")]
    [InlineData("fc x")]
    public async Task A_prefix_that_is_not_a_lowercase_name_is_refused(string prefix)
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(() =>
            NetworkNamespace.CreateAsync(prefix, 1, ShapedLinkOptions.Unshaped, CancellationToken.None));

        Assert.Equal("prefix", error.ParamName);
        Assert.Contains($"prefix '{prefix}' is not allowed", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(256)]
    public async Task An_index_that_is_not_an_octet_is_refused(int index)
    {
        var error = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() =>
            NetworkNamespace.CreateAsync("fc", index, ShapedLinkOptions.Unshaped, CancellationToken.None));

        Assert.Contains("allowed 0 to 255", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_interface_name_longer_than_fifteen_characters_is_refused_saying_how_long_the_prefix_may_be()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(() =>
            NetworkNamespace.CreateAsync("abcdefghijk", 200, ShapedLinkOptions.Unshaped, CancellationToken.None));

        Assert.Contains("'abcdefghijkv200a' (16 characters)", error.Message, StringComparison.Ordinal);
        Assert.Contains("at most 15", error.Message, StringComparison.Ordinal);
        Assert.Contains("prefix of at most 10 characters", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Names_and_addresses_follow_the_prefix_and_index()
    {
        var names = NetworkNames.Create("fc", 7);

        Assert.Equal("fc-7", names.Namespace);
        Assert.Equal("fcv7a", names.RootInterface);
        Assert.Equal("fcv7b", names.InstanceInterface);
        Assert.Equal("fcv7i", names.IngressInterface);
        Assert.Equal("10.250.7.1", names.HostAddress.ToString());
        Assert.Equal("10.250.7.2", names.InstanceAddress.ToString());
    }

    [Fact]
    public void The_patterns_match_only_their_own_prefix()
    {
        var namespaces = NetworkNames.NamespacePattern("fc");
        var interfaces = NetworkNames.InterfacePattern("fc");

        Assert.Matches(namespaces, "fc-12");
        Assert.DoesNotMatch(namespaces, "fc-1-2");
        Assert.DoesNotMatch(namespaces, "fcx-1");
        Assert.Matches(interfaces, "fcv12a");
        Assert.Matches(interfaces, "fcv3i");
        Assert.DoesNotMatch(interfaces, "fcxv1a");
        Assert.DoesNotMatch(interfaces, "fcv1v2a");
        Assert.DoesNotMatch(interfaces, "eth0");
    }

    [Fact]
    public void IP_output_is_parsed_into_names()
    {
        const string Links = "1: lo: <LOOPBACK,UP> mtu 65536\n5: fcv1a@if4: <BROADCAST> mtu 1500\n6: fcv1i: <BROADCAST,NOARP> mtu 1500\n";
        const string Namespaces = "fc-1 (id: 0)\nother\n";

        Assert.Equal(["lo", "fcv1a", "fcv1i"], NetworkNamespace.ParseLinkNames(Links));
        Assert.Equal(["fc-1", "other"], NetworkNamespace.ParseNamespaceNames(Namespaces));
    }
}
