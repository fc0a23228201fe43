namespace FaaSCache.Membership.Tests;

[Trait("Category", "Unit")]
public sealed class MembershipListTests
{
    private static readonly DateTimeOffset Now = new(2026, 1, 2, 3, 4, 5, TimeSpan.Zero);

    [Fact]
    public void Members_are_kept_in_ordinal_id_order_whatever_order_they_are_given_in()
    {
        var list = new MembershipList([Member("c"), Member("a"), Member("B")]);

        Assert.Equal(["B", "a", "c"], list.Ids);
        Assert.True(list.Contains("a"));
        Assert.False(list.Contains("A"));
        Assert.Equal("c", list.Find("c")!.Id);
        Assert.Null(list.Find("z"));
    }

    [Fact]
    public void A_list_with_the_same_id_twice_is_rejected()
    {
        var e = Assert.Throws<ArgumentException>(() => new MembershipList([Member("a"), Member("a")]));

        Assert.Contains("'a'", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void WithMember_adds_a_new_member_and_replaces_an_existing_one()
    {
        var list = new MembershipList([Member("a", heartbeatAgo: 3)]);

        var added = list.WithMember(Member("b"));
        var replaced = added.WithMember(Member("a", heartbeatAgo: 0));

        Assert.Equal(["a", "b"], added.Ids);
        Assert.Equal(["a", "b"], replaced.Ids);
        Assert.Equal(Now, replaced.Find("a")!.LastHeartbeat);
        Assert.Equal(Now.AddSeconds(-3), list.Find("a")!.LastHeartbeat);
    }

    [Fact]
    public void WithoutMember_of_an_unlisted_id_returns_the_same_list()
    {
        var list = new MembershipList([Member("a")]);

        Assert.Same(list, list.WithoutMember("b"));
        Assert.Empty(list.WithoutMember("a").Members);
    }

    [Fact]
    public void Members_whose_heartbeat_is_older_than_the_failure_timeout_are_stale()
    {
        var list = new MembershipList([Member("fresh", heartbeatAgo: 1), Member("edge", heartbeatAgo: 15), Member("old", heartbeatAgo: 16)]);

        Assert.Equal(["old"], list.StaleMembers(Now, TimeSpan.FromSeconds(15)).Select(m => m.Id));
        Assert.Equal(["edge", "fresh"], list.WithoutStale(Now, TimeSpan.FromSeconds(15)).Ids);
        Assert.Same(list, list.WithoutStale(Now, TimeSpan.FromSeconds(60)));
    }

    [Fact]
    public void A_list_survives_a_round_trip_through_its_json_form()
    {
        var list = new MembershipList(
        [
            Member("b") with { Metadata = new Dictionary<string, string> { ["host"] = "vm-7", ["pid"] = "42" } },
            Member("a", heartbeatAgo: 2),
        ]);

        byte[] json = MembershipJson.Serialize(list);
        var parsed = MembershipJson.Parse(json, "c/app.json");

        Assert.Equal(list, parsed);
        string text = Encoding.UTF8.GetString(json);
        Assert.Contains("\"members\"", text, StringComparison.Ordinal);
        Assert.Contains("\"lastHeartbeat\"", text, StringComparison.Ordinal);
        Assert.Contains("\"endpoint\": \"http://a.peers.test:7070/\"", text, StringComparison.Ordinal);
    }

    [Fact]
    public void A_zero_length_blob_reads_as_an_empty_list()
    {
        Assert.Empty(MembershipJson.Parse([], "c/app.json").Members);
    }

    [Theory]
    [InlineData("{not json")]
    [InlineData("null")]
    [InlineData("[]")]
    [InlineData("{\"schema\":1}")]
    [InlineData("{\"members\":[{\"id\":\"a\"}]}")]
    [InlineData("{\"members\":[{\"id\":\"\",\"endpoint\":\"http://x/\",\"startedAt\":\"2026-01-01T00:00:00Z\",\"lastHeartbeat\":\"2026-01-01T00:00:00Z\"}]}")]
    [InlineData("{\"members\":[{\"id\":\"a\",\"endpoint\":\"relative/path\",\"startedAt\":\"2026-01-01T00:00:00Z\",\"lastHeartbeat\":\"2026-01-01T00:00:00Z\"}]}")]
    [InlineData("{\"members\":[{\"id\":null,\"endpoint\":\"http://x/\",\"startedAt\":\"2026-01-01T00:00:00Z\",\"lastHeartbeat\":\"2026-01-01T00:00:00Z\"}]}")]
    [InlineData("{\"schema\":2,\"members\":[]}")]
    public void A_malformed_blob_gives_an_error_that_names_the_blob(string json)
    {
        var e = Assert.Throws<MembershipFormatException>(() => MembershipJson.Parse(Encoding.UTF8.GetBytes(json), "faascache-membership/orders.json"));

        Assert.Equal("faascache-membership/orders.json", e.Blob);
        Assert.Contains("'faascache-membership/orders.json'", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("orders", "orders.json")]
    [InlineData("Orders-App_2.prod", "orders-app_2.prod.json")]
    public void An_app_name_maps_to_a_lower_case_json_blob_name(string app, string blob)
    {
        Assert.Equal(blob, MembershipStore.BlobNameFor(app));
    }

    [Theory]
    [InlineData("")]
    [InlineData("../etc")]
    [InlineData("a/b")]
    [InlineData("-lead")]
    [InlineData("trail.")]
    [InlineData("sp ace")]
    [InlineData("naïve")]
    public void An_app_name_that_is_not_a_safe_blob_name_is_rejected(string app)
    {
        var e = Assert.Throws<ArgumentException>(() => MembershipStore.BlobNameFor(app));

        Assert.Contains("app name", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_app_name_longer_than_the_limit_is_rejected()
    {
        Assert.Throws<ArgumentException>(() => MembershipStore.BlobNameFor(new string('a', MembershipStore.MaxAppNameLength + 1)));
    }

    [Theory]
    [InlineData("ab")]
    [InlineData("Upper")]
    [InlineData("double--hyphen")]
    [InlineData("-lead")]
    public void An_invalid_container_name_is_rejected(string name)
    {
        Assert.Throws<ArgumentException>(() => MembershipStore.ValidateContainerName(name));
    }

    [Theory]
    [InlineData(5, 5, 100, "membership:failureTimeout")]
    [InlineData(0, 15, 100, "membership:heartbeatInterval")]
    [InlineData(5, 15, 0, "membership:virtualNodes")]
    [InlineData(5, 15, 10_001, "membership:virtualNodes")]
    public void A_daemon_refuses_membership_settings_out_of_range_naming_the_host_json_key(int heartbeatSeconds, int failureSeconds, int virtualNodes, string named)
    {
        var options = new FaaSCache.Options.MembershipOptions
        {
            HeartbeatInterval = TimeSpan.FromSeconds(heartbeatSeconds),
            FailureTimeout = TimeSpan.FromSeconds(failureSeconds),
            VirtualNodes = virtualNodes,
        };

        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new MembershipDaemon(UnusedStore(), new MemberIdentity("orders", "a", new Uri("http://a:1/")), options));

        Assert.Contains(named, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_member_identity_needs_a_self_id_and_an_absolute_endpoint()
    {
        Assert.Throws<ArgumentException>(new MemberIdentity("orders", "", new Uri("http://a:1/")).Validate);
        Assert.Throws<ArgumentException>(new MemberIdentity("orders", "a", new Uri("/x", UriKind.Relative)).Validate);
        Assert.Throws<ArgumentException>(new MemberIdentity("../x", "a", new Uri("http://a:1/")).Validate);
    }

    [Fact]
    public void A_store_refuses_retry_limits_out_of_range_naming_each_in_one_configuration_error()
    {
        var options = new MembershipStoreOptions { MaxAttempts = 0, BackoffBase = TimeSpan.FromSeconds(1), BackoffMax = TimeSpan.Zero };

        var e = Assert.Throws<FaaSCacheConfigurationException>(() => new MembershipStore(
            new Azure.Storage.Blobs.BlobContainerClient(new Uri("http://127.0.0.1:1/devstoreaccount1/unused"), MembershipStore.CreateClientOptions()), "orders", options));

        Assert.Equal(2, e.Failures.Count);
        Assert.Contains(e.Failures, f => f.StartsWith("MembershipStoreOptions.MaxAttempts is 0", StringComparison.Ordinal));
        Assert.Contains(e.Failures, f => f.StartsWith("MembershipStoreOptions.BackoffBase is 00:00:01", StringComparison.Ordinal));
    }

    private static MembershipStore UnusedStore() =>
        new(new Azure.Storage.Blobs.BlobContainerClient(new Uri("http://127.0.0.1:1/devstoreaccount1/unused"), MembershipStore.CreateClientOptions()), "orders");

    [Fact]
    public void Before_it_starts_a_daemon_owns_every_key_itself()
    {
        using var daemon = new MembershipDaemon(UnusedStore(), new MemberIdentity("orders", "a", new Uri("http://a:1/")));

        Assert.Equal(["a"], daemon.Owners.Current.Members);
        Assert.Equal("a", daemon.Owners.GetOwner("photos/cat.jpg"));
        Assert.Empty(daemon.Members);
        Assert.True(daemon.TryGetEndpoint("a", out var endpoint));
        Assert.Equal(new Uri("http://a:1/"), endpoint);
        Assert.False(daemon.TryGetEndpoint("b", out _));
        Assert.False(daemon.IsRunning);
    }

    private static MemberInfo Member(string id, int heartbeatAgo = 0)
        => new(id, new Uri($"http://{id.ToLowerInvariant()}.peers.test:7070/"), Now.AddMinutes(-1), Now.AddSeconds(-heartbeatAgo));
}
