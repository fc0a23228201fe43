using System.Net;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// Keys as the Functions host has them, attacked with no key, a wrong key and keys of the wrong level: an HTTP
/// trigger's authLevel, <c>/admin</c> and <c>/metrics</c> behind the master key, keys from the files store.
/// </summary>
[Trait("Category", "Security")]
public sealed class HostKeyTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task an_enforcing_host_opens_each_function_to_its_level_and_admin_to_the_master_key_only()
    {
        string container = "sec-" + Guid.NewGuid().ToString("N")[..10];
        using FunctionAppFolder app = SecurityApp.Build(container);
        string secrets = Path.Combine(app.Path, ".faascache", "secrets");
        string master = HostKeyFiles.NewKey(), hostKey = HostKeyFiles.NewKey(), systemKey = HostKeyFiles.NewKey(), keyedKey = HostKeyFiles.NewKey();
        HostKeyFiles.WriteHostKeys(secrets, master, new Dictionary<string, string> { ["default"] = hostKey }, new Dictionary<string, string> { ["blobs_extension"] = systemKey });
        HostKeyFiles.WriteFunctionKeys(secrets, "Keyed", new Dictionary<string, string> { ["default"] = keyedKey });
        await azurite.CreateServiceClient().GetBlobContainerClient(container).CreateIfNotExistsAsync();
        await azurite.CreateServiceClient().GetBlobContainerClient(container).GetBlobClient("open.txt").UploadAsync(BinaryData.FromString("hello"));
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path, extraArgs: new Dictionary<string, string> { ["--auth"] = "on" });
        await host.WaitForWorkersAsync();
        using var http = new HttpClient { BaseAddress = host.BaseUri };

        async Task<(HttpStatusCode Status, string Body)> Get(string path, string? key = null, bool asQuery = false)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, key is not null && asQuery ? $"{path}{(path.Contains('?', StringComparison.Ordinal) ? '&' : '?')}code={Uri.EscapeDataString(key)}" : path);
            if (key is not null && !asQuery)
            {
                request.Headers.Add("x-functions-key", key);
            }

            using HttpResponseMessage response = await http.SendAsync(request);
            return (response.StatusCode, await response.Content.ReadAsStringAsync());
        }

        Assert.Contains("Keys           enforced", host.Output, StringComparison.Ordinal);
        // No key: anonymous opens, the rest is 401 with no body; the ping stays open for probes.
        Assert.Equal((HttpStatusCode.OK, "hello"), await Get("api/open"));
        Assert.Equal((HttpStatusCode.Unauthorized, ""), await Get("api/keyed"));
        Assert.Equal((HttpStatusCode.Unauthorized, ""), await Get("api/adminonly"));
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("admin/host/status")).Status);
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("admin/invocations")).Status);
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("metrics")).Status);
        Assert.Equal(HttpStatusCode.OK, (await Get("admin/host/ping")).Status);
        using (HttpResponseMessage remove = await http.PostAsync($"admin/cache/remove?key={container}/open.txt", null))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, remove.StatusCode);
        }

        // A wrong key, a key of another function's, a system key: no function-level function opens.
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("api/keyed", HostKeyFiles.NewKey())).Status);
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("api/keyed2", keyedKey)).Status);
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("api/keyed", systemKey)).Status);
        // The function's own key (header or ?code=) and the host function key open it; neither opens admin.
        Assert.Equal((HttpStatusCode.OK, "keyed"), await Get("api/keyed", keyedKey));
        Assert.Equal((HttpStatusCode.OK, "keyed"), await Get("api/keyed", keyedKey, asQuery: true));
        Assert.Equal((HttpStatusCode.OK, "keyed2"), await Get("api/keyed2", hostKey));
        Assert.Equal(HttpStatusCode.Unauthorized, (await Get("api/adminonly", hostKey)).Status);
        Assert.Equal(HttpStatusCode.Forbidden, (await Get("admin/host/status", hostKey)).Status);
        Assert.Equal(HttpStatusCode.Forbidden, (await Get("admin/host/status", systemKey)).Status);
        // The master key opens everything.
        Assert.Equal((HttpStatusCode.OK, "admin"), await Get("api/adminonly", master));
        Assert.Equal((HttpStatusCode.OK, "keyed2"), await Get("api/keyed2", master, asQuery: true));
        Assert.Equal(HttpStatusCode.OK, (await Get("admin/host/status", master)).Status);
        Assert.Equal(HttpStatusCode.OK, (await Get("metrics", master)).Status);

        // Keys the store made itself (Keyed2 had none) are the Functions host's file, readable by the owner only.
        string made = Path.Combine(secrets, "keyed2.json");
        Assert.True(File.Exists(made), "the store made keyed2.json when a key for Keyed2 was checked");
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(made));
        Assert.DoesNotContain(master, host.Output, StringComparison.Ordinal);
        Assert.DoesNotContain(keyedKey, host.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task a_host_for_local_development_checks_no_key_and_says_so()
    {
        string container = "sec-" + Guid.NewGuid().ToString("N")[..10];
        using FunctionAppFolder app = SecurityApp.Build(container);
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path);
        await host.WaitForWorkersAsync();
        using var http = new HttpClient { BaseAddress = host.BaseUri };

        Assert.Contains("Keys           not enforced: local development", host.Output, StringComparison.Ordinal);
        // What the cache writes into the account and whom it joins there (issue 38): the banner says it.
        Assert.Contains("In storage     faascache-membership/", host.Output, StringComparison.Ordinal);
        Assert.Contains("joins it; --app-name to choose", host.Output, StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("api/keyed")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("api/adminonly")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("admin/host/status")).StatusCode);
        Assert.False(Directory.Exists(Path.Combine(app.Path, ".faascache", "secrets")), "no keys are made when none are checked");
    }
}
