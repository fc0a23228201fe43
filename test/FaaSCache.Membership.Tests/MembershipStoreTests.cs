namespace FaaSCache.Membership.Tests;

[Trait("Category", "Integration")]
public sealed class MembershipStoreTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private static readonly DateTimeOffset Started = new(2026, 1, 2, 3, 4, 5, TimeSpan.Zero);

    [Fact]
    public async Task Reading_when_neither_the_container_nor_the_blob_exists_gives_an_empty_list_without_an_etag()
    {
        await using var bed = new MembershipTestBed(azurite, output);

        var snapshot = await bed.NewStore().ReadAsync();

        Assert.Empty(snapshot.List.Members);
        Assert.Null(snapshot.ETag);
        Assert.False((await bed.NewContainerClient().ExistsAsync()).Value);
    }

    [Fact]
    public async Task The_first_update_creates_the_container_and_the_blob_named_after_the_app()
    {
        await using var bed = new MembershipTestBed(azurite, output, app: "Orders-App");
        var store = bed.NewStore();

        var written = await store.UpdateAsync(list => list.WithMember(Member("a")));
        var read = await store.ReadAsync();

        Assert.Equal($"{bed.ContainerName}/orders-app.json", store.BlobPath);
        Assert.True((await bed.NewContainerClient().GetBlobClient("orders-app.json").ExistsAsync()).Value);
        Assert.Equal(["a"], read.List.Ids);
        Assert.Equal(written.ETag, read.ETag);
        Assert.Equal(written.List, read.List);
        Assert.Equal("application/json", (await bed.Blob.GetPropertiesAsync()).Value.ContentType);
    }

    [Fact]
    public async Task An_update_that_changes_nothing_does_not_write()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var store = bed.NewStore();
        var first = await store.UpdateAsync(list => list.WithMember(Member("a")));

        var unchanged = await store.UpdateAsync(_ => null);
        var same = await store.UpdateAsync(list => list);

        Assert.Equal(first.ETag, unchanged.ETag);
        Assert.Equal(first.ETag, same.ETag);
    }

    [Fact]
    public async Task Ten_parallel_updates_adding_distinct_members_lose_none_of_them()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var ids = Enumerable.Range(0, 10).Select(i => $"member-{i:00}").ToArray();

        // Each writer has its own client, and all of them race to create the container and the blob too.
        var results = await Task.WhenAll(ids.Select(id => Task.Run(() => bed.NewStore().UpdateAsync(list => list.WithMember(Member(id))))));

        Assert.Equal(ids, (await bed.ReadListAsync()).Ids);
        Assert.All(ids, id => Assert.Contains(results, r => r.List.Contains(id)));
        Assert.Equal(10, results.Select(r => r.ETag).Distinct().Count());
    }

    [Fact]
    public async Task Conditional_read_answers_null_while_the_blob_keeps_its_etag_and_the_new_list_once_it_changes()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var store = bed.NewStore();
        Assert.Null(await store.ReadIfChangedAsync(null));
        var first = await store.UpdateAsync(list => list.WithMember(Member("a")));

        var unchanged = await store.ReadIfChangedAsync(first.ETag);
        await bed.NewStore().UpdateAsync(list => list.WithMember(Member("b")));
        var changed = await store.ReadIfChangedAsync(first.ETag);

        Assert.Null(unchanged);
        Assert.NotNull(changed);
        Assert.Equal(["a", "b"], changed.List.Ids);
        Assert.NotEqual(first.ETag, changed.ETag);
    }

    [Fact]
    public async Task An_update_that_keeps_losing_the_race_gives_up_after_the_attempt_limit_with_a_clear_error()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        var store = bed.NewStore(new MembershipStoreOptions { MaxAttempts = 3, BackoffBase = TimeSpan.FromMilliseconds(1), BackoffMax = TimeSpan.FromMilliseconds(5) });
        await store.UpdateAsync(list => list.WithMember(Member("a")));
        var rival = bed.Blob;
        int calls = 0;

        var e = await Assert.ThrowsAsync<MembershipConflictException>(() => store.UpdateAsync(list =>
        {
            calls++;

            // Another writer changes the blob between this update's read and its write, every time.
            rival.Upload(BinaryData.FromString($"{{\"members\":[],\"rival\":{calls}}}"), overwrite: true);
            return list.WithMember(Member("b"));
        }));

        Assert.Equal(3, calls);
        Assert.Equal(3, e.Attempts);
        Assert.Equal(store.BlobPath, e.Blob);
        Assert.Contains(store.BlobPath, e.Message, StringComparison.Ordinal);
        Assert.Contains("HTTP 412/409", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_malformed_membership_blob_gives_an_error_naming_the_blob_on_read_and_on_update()
    {
        await using var bed = new MembershipTestBed(azurite, output);
        await bed.NewContainerClient().CreateAsync();
        await bed.Blob.UploadAsync(BinaryData.FromString("{\"members\": [ oops"));
        var store = bed.NewStore();

        var onRead = await Assert.ThrowsAsync<MembershipFormatException>(() => store.ReadAsync());
        var onUpdate = await Assert.ThrowsAsync<MembershipFormatException>(() => store.UpdateAsync(list => list.WithMember(Member("a"))));

        Assert.Contains($"'{store.BlobPath}'", onRead.Message, StringComparison.Ordinal);
        Assert.Equal(store.BlobPath, onUpdate.Blob);
    }

    private static MemberInfo Member(string id) => new(id, MembershipTestBed.EndpointOf(id), Started, DateTimeOffset.UtcNow);
}
