using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// What a misbehaving worker sends the host, one kind per method, each with its parameters drawn from a seeded
/// <see cref="Random"/>; each asserts the clear error (the invocation's failure or a logged warning) and that nothing of
/// the host's was changed. <see cref="All"/> is the generator's menu.
/// </summary>
internal static class MisbehavingWorkerCases
{
    private static readonly string[] BadNames =
        ["../x", "a/b", "/etc/passwd", "..", ".", "", "x y", "AzureFunctions/../y", "%2e%2e", new string('a', 300), "ok\0name", "név"];

    /// <summary>The kinds of misbehaviour, by name.</summary>
    public static readonly IReadOnlyList<(string Name, Func<FakeWorkerHost, Random, HostMap, Task<string>> Run)> All =
    [
        ("unknown-invocation-id", UnknownInvocationIdAsync),
        ("repeated-response", RepeatedResponseAsync),
        ("missing-map", (rig, random, _) => RefusedMapAsync(rig, random, Hex(random), count: 1, "does not exist")),
        ("bad-map-name", (rig, random, _) => RefusedMapAsync(rig, random, BadNames[random.Next(BadNames.Length)], count: 1, "not a valid shared-memory map name")),
        ("host-own-map", HostOwnMapAsync),
        ("count-not-the-maps", CountMismatchAsync),
        ("negative-or-past-end-region", BadRegionAsync),
        ("region-at-an-offset", RegionAtAnOffsetAsync),
        ("bad-header", BadHeaderAsync),
        ("held-open-and-shrunk", HeldOpenAndShrunkAsync),
        ("wrong-region-type", WrongRegionTypeAsync),
        ("wrong-value-type", WrongValueTypeAsync),
        ("close-request-from-worker", CloseRequestFromWorkerAsync),
        ("close-response-unasked", (rig, random, _) => LoggedAsync(rig, UnaskedClose(Hex(random)), "which the host never asked it to close")),
        ("load-response-unasked", (rig, random, _) => LoggedAsync(rig, new StreamingMessage { FunctionLoadResponse = new FunctionLoadResponse { FunctionId = Hex(random) } }, "which the host did not ask for")),
        ("empty-message", (rig, _, _) => LoggedAsync(rig, new StreamingMessage(), "an empty message")),
        ("host-only-request", (rig, random, _) => LoggedAsync(rig, new StreamingMessage { InvocationRequest = new InvocationRequest { InvocationId = Hex(random) } }, "which only the host sends")),
        ("failure-with-huge-message", FailureAsync),
    ];

    /// <summary>An object the host holds in its cache: its key's name, content and the map the host handed to the worker.</summary>
    public sealed record HostMap(string Name, byte[] Content, RpcSharedMemory Map);

    public static string Hex(Random random) => Convert.ToHexStringLower(random.GetItems<byte>(Enumerable.Range(0, 256).Select(b => (byte)b).ToArray(), 16));

    /// <summary>A response for an invocation that is not in flight, then the right one: the host logs the first and serves.</summary>
    public static async Task<string> UnknownInvocationIdAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"u-{Hex(random)}", [1, 2, 3]);
        string bogus = random.Next(4) switch { 0 => string.Empty, 1 => new string('z', 5000), 2 => request.InvocationId[..^1] + "0", _ => Guid.NewGuid().ToString() };
        await rig.Worker.SendAsync(FakeWorkerHost.Success(bogus, "bogus"));
        await rig.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "ok", Bytes("blob", [1, 2, 3])));
        using HttpResponseMessage response = await http;
        Assert.True(response.IsSuccessStatusCode, await FakeWorkerHost.ErrorOfAsync(response));
        Assert.True(await rig.WaitForLogAsync($"sent a response for invocation '{bogus}', which is not in flight"), "the unknown id was not logged");
        return $"response for '{Short(bogus)}'";
    }

    /// <summary>The same response twice: the second is logged and ignored.</summary>
    public static async Task<string> RepeatedResponseAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"r-{Hex(random)}", [4]);
        StreamingMessage answer = FakeWorkerHost.Success(request.InvocationId, "ok", Bytes("blob", [4]));
        await rig.Worker.SendAsync(answer);
        using HttpResponseMessage response = await http;
        Assert.True(response.IsSuccessStatusCode, await FakeWorkerHost.ErrorOfAsync(response));
        await rig.Worker.SendAsync(answer);
        Assert.True(
            await rig.WaitForLogAsync($"response for invocation '{request.InvocationId}', which is not in flight") ||
            await rig.WaitForLogAsync($"second response for invocation '{request.InvocationId}'"),
            "the repeated response was not logged");
        return "repeated";
    }

    /// <summary>An output region naming <paramref name="name"/>: the invocation fails with <paramref name="phrase"/>.</summary>
    public static async Task<string> RefusedMapAsync(FakeWorkerHost rig, Random random, string name, long count, string phrase, long offset = 0, RpcDataType type = RpcDataType.Bytes)
    {
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"m-{Hex(random)}", [9]);
        var region = new RpcSharedMemory { Name = name, Offset = offset, Count = count, Type = type };
        await rig.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "ok", new ParameterBinding { Name = "blob", RpcSharedMemory = region }));
        await ExpectFailureAsync(http, phrase, $"map '{Short(name)}' offset {offset} count {count} type {type}");
        return $"map '{Short(name)}' offset {offset} count {count} type {type}";
    }

    /// <summary>An output naming the map the host handed over as an input: refused, and the cached object is unchanged.</summary>
    public static async Task<string> HostOwnMapAsync(FakeWorkerHost rig, Random random, HostMap cached)
    {
        await RefusedMapAsync(rig, random, cached.Map.Name, cached.Map.Count, "one of this host's own cache maps");
        await ExpectCachedAsync(rig, cached);
        return $"host map {cached.Map.Name}";
    }

    /// <summary>A worker's map whose count is not its length (larger, smaller, huge): refused, and the map removed.</summary>
    public static async Task<string> CountMismatchAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        byte[] content = random.GetItems<byte>([1, 2, 3], random.Next(1, 4096));
        string name = Hex(random);
        string path = rig.WriteMap(name, content);
        long count = random.Next(5) switch { 0 => content.Length + 1L, 1 => content.Length - 1L, 2 => long.MaxValue, 3 => 1L << 40, _ => int.MaxValue + 1L };
        await RefusedMapAsync(rig, random, name, count, "but the output says count");
        Assert.False(File.Exists(path), "a refused map nobody else held is removed, not leaked");
        return $"{content.Length} bytes, count {count}";
    }

    /// <summary>Negative counts and offsets, offsets past the end: refused naming offset or count, and the map removed.</summary>
    public static async Task<string> BadRegionAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        byte[] content = random.GetItems<byte>([7, 8], random.Next(1, 2048));
        string name = Hex(random);
        string path = rig.WriteMap(name, content);
        string refused = random.Next(3) switch
        {
            0 => await RefusedMapAsync(rig, random, name, -1 - random.Next(1000), "count must be >= 0"),
            1 => await RefusedMapAsync(rig, random, name, content.Length, "offset", offset: -1 - random.Next(1000)),
            _ => await RefusedMapAsync(rig, random, name, long.MaxValue, "is outside it", offset: content.Length + random.Next(1, 1 << 20)),
        };
        Assert.False(File.Exists(path), "a refused map nobody else held is removed, not leaked");
        return refused;
    }

    /// <summary>A region inside a worker's map (offset > 0): its bytes are written (copied), and the map removed.</summary>
    public static async Task<string> RegionAtAnOffsetAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        byte[] content = random.GetItems<byte>([5, 6, 7], random.Next(2, 4096));
        string name = Hex(random);
        string path = rig.WriteMap(name, content);
        int offset = random.Next(1, content.Length);
        int count = random.Next(0, content.Length - offset + 1);
        string key = $"region-{Hex(random)}";
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync(key, [9]);
        var region = new RpcSharedMemory { Name = name, Offset = offset, Count = count, Type = RpcDataType.Bytes };
        await rig.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "ok", new ParameterBinding { Name = "blob", RpcSharedMemory = region }));
        using (HttpResponseMessage response = await http)
        {
            Assert.True(response.IsSuccessStatusCode, await FakeWorkerHost.ErrorOfAsync(response));
        }

        (ParameterBinding input, bool ok) = await rig.GetAsync(key);
        Assert.True(ok, "the written region could not be read back");
        Assert.Equal(content[offset..(offset + count)], rig.ContentOf(input));
        Assert.False(File.Exists(path), "the worker's map, copied and not adopted, is removed");
        return $"{count} bytes at {offset} of {content.Length}";
    }

    /// <summary>A map that is not initialized or declares more than the file holds: refused naming the header.</summary>
    public static async Task<string> BadHeaderAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        byte[] content = random.GetItems<byte>([5], random.Next(0, 1024));
        string name = Hex(random);
        bool uninitialized = random.Next(2) == 0;
        string path = uninitialized ? rig.WriteMap(name, content, initialized: 0) : rig.WriteMap(name, content, declaredLength: content.Length + random.Next(1, 1 << 30));
        await RefusedMapAsync(rig, random, name, content.Length, uninitialized ? "is not initialized" : "content bytes but the file holds");
        Assert.False(File.Exists(path), "a refused map nobody else held is removed, not leaked");
        return uninitialized ? "uninitialized" : "declares more than it holds";
    }

    /// <summary>
    /// The worker keeps its map open, returns it, and shrinks it (ftruncate) while the host would read it: the host refuses
    /// to take over a map someone else holds, so it never reads it through a mapping (SIGBUS).
    /// </summary>
    public static async Task<string> HeldOpenAndShrunkAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        byte[] content = random.GetItems<byte>([1, 9], random.Next(1, 1 << 20));
        string name = Hex(random);
        string path = rig.WriteMap(name, content);
        using (var held = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite))
        {
            (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"s-{Hex(random)}", [1]);
            await ReturnMapWhileShrinkingAsync(rig, random, request, http, held, name, content.Length);
            await ExpectFailureAsync(http, "is open in another process", "a map the worker still held");
        }

        File.Delete(path);
        return $"{content.Length} bytes held and shrunk";
    }

    /// <summary>A region typed as something no blob is (HTTP, a number, an unknown value).</summary>
    public static async Task<string> WrongRegionTypeAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        string name = Hex(random);
        string path = rig.WriteMap(name, [1, 2]);
        RpcDataType type = random.GetItems<RpcDataType>([RpcDataType.Http, RpcDataType.Int, RpcDataType.Double, RpcDataType.CollectionBytes, (RpcDataType)77], 1)[0];
        string refused = await RefusedMapAsync(rig, random, name, 2, "type bytes, string, json or stream", type: type);
        Assert.False(File.Exists(path), "a refused map nobody else held is removed, not leaked");
        return refused;
    }

    /// <summary>An output value of a type a blob cannot hold, or none.</summary>
    public static async Task<string> WrongValueTypeAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        (TypedData data, string phrase) = random.Next(5) switch
        {
            0 => (new TypedData { Int = random.Next() }, "cannot be written to a blob"),
            1 => (new TypedData { Double = random.NextDouble() }, "cannot be written to a blob"),
            2 => (new TypedData { Http = new RpcHttp { StatusCode = "200" } }, "cannot be written to a blob"),
            3 => (new TypedData { CollectionString = new CollectionString { String = { "a", "b" } } }, "cannot be written to a blob"),
            _ => (new TypedData(), "got no value"),
        };
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"t-{Hex(random)}", [1]);
        await rig.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "ok", new ParameterBinding { Name = "blob", Data = data }));
        await ExpectFailureAsync(http, phrase, $"a {data.DataCase} value");
        return $"{data.DataCase} value";
    }

    /// <summary>The worker asks the host to close maps (the host's own, unknown ones): nothing is closed or deleted.</summary>
    public static async Task<string> CloseRequestFromWorkerAsync(FakeWorkerHost rig, Random random, HostMap cached)
    {
        var request = new CloseSharedMemoryResourcesRequest { MapNames = { cached.Map.Name, Hex(random), "../" + cached.Map.Name } };
        await LoggedAsync(rig, new StreamingMessage { CloseSharedMemoryResourcesRequest = request }, "which only the host sends");
        await ExpectCachedAsync(rig, cached);
        return "close request";
    }

    /// <summary>A function failure with a 100 KB message: the invocation fails naming its start.</summary>
    public static async Task<string> FailureAsync(FakeWorkerHost rig, Random random, HostMap _)
    {
        string message = $"boom-{Hex(random)} " + new string('x', 100_000);
        (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"f-{Hex(random)}", [1]);
        await rig.Worker.SendAsync(new StreamingMessage
        {
            InvocationResponse = new InvocationResponse
            {
                InvocationId = request.InvocationId,
                Result = new StatusResult { Status = StatusResult.Types.Status.Failure, Exception = new RpcException { Message = message } },
            },
        });
        await ExpectFailureAsync(http, message[..40], "a failure");
        return "failure";
    }

    /// <summary>Sends <paramref name="message"/> and waits for the warning naming <paramref name="phrase"/>.</summary>
    public static async Task<string> LoggedAsync(FakeWorkerHost rig, StreamingMessage message, string phrase)
    {
        await rig.Worker.SendAsync(message);
        Assert.True(await rig.WaitForLogAsync(phrase), $"the host did not log '{phrase}' for {message.ContentCase}");
        return message.ContentCase.ToString();
    }

    /// <summary>The cached object still reads back whole from the same map.</summary>
    public static async Task ExpectCachedAsync(FakeWorkerHost rig, HostMap cached)
    {
        (ParameterBinding input, bool ok) = await rig.GetAsync(cached.Name);
        Assert.True(ok);
        Assert.Equal(cached.Map.Name, input.RpcSharedMemory?.Name);
        Assert.Equal(cached.Content, rig.ContentOf(input));
    }

    public static async Task ExpectFailureAsync(Task<HttpResponseMessage> http, string phrase, string what)
    {
        using HttpResponseMessage response = await http;
        string error = await FakeWorkerHost.ErrorOfAsync(response);
        Assert.False(response.IsSuccessStatusCode, $"{what}: the invocation succeeded");
        Assert.True(error.Contains(phrase, StringComparison.Ordinal), $"{what}: the error does not say '{phrase}': {Short(error, 400)}");
    }

    /// <summary>
    /// Answers <paramref name="request"/> with the worker's map <paramref name="name"/> (<paramref name="count"/> bytes) as
    /// the output <c>blob</c>, then shrinks and regrows <paramref name="held"/> at random (up to its 9-byte header and
    /// the content) until the host has answered <paramref name="http"/>.
    /// </summary>
    public static async Task ReturnMapWhileShrinkingAsync(FakeWorkerHost rig, Random random, InvocationRequest request, Task<HttpResponseMessage> http, FileStream held, string name, int count)
    {
        await rig.Worker.SendAsync(FakeWorkerHost.Success(request.InvocationId, "ok", new ParameterBinding
        {
            Name = "blob",
            RpcSharedMemory = new RpcSharedMemory { Name = name, Count = count, Type = RpcDataType.Bytes },
        }));
        while (!http.IsCompleted)
        {
            held.SetLength(random.Next(0, count + 9));
            await Task.Yield();
        }
    }

    public static ParameterBinding Bytes(string name, byte[] content) => new() { Name = name, Data = new TypedData { Bytes = ByteString.CopyFrom(content) } };

    private static StreamingMessage UnaskedClose(string name)
    {
        var response = new CloseSharedMemoryResourcesResponse();
        response.CloseMapResults[name] = true;
        return new StreamingMessage { CloseSharedMemoryResourcesResponse = response };
    }

    private static string Short(string text, int length = 40) =>
        text.Length <= length ? text : string.Create(CultureInfo.InvariantCulture, $"{text[..length]}... ({text.Length} chars)");
}
