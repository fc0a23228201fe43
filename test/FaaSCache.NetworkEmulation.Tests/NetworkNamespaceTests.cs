namespace FaaSCache.NetworkEmulation.Tests;

[Trait("Category", "Integration")]
[Collection(NetworkNamespaceCollection.Name)]
public sealed class NetworkNamespaceTests
{
    [NetworkEmulationFact]
    public async Task Create_makes_the_namespace_and_its_links_and_dispose_leaves_nothing_behind()
    {
        await using var test = new TestNetwork();
        var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = 90_000_000 });
        try
        {
            Assert.Equal($"{test.Prefix}-{network.HostAddress.GetAddressBytes()[2]}", network.Name);
            Assert.Equal(
                new[] { network.Name, network.RootInterface, network.IngressInterface }.Order(StringComparer.Ordinal),
                TestNetwork.Leftovers(test.Prefix).Order(StringComparer.Ordinal));
            Assert.Contains($"inet {network.InstanceAddress}/30",
                TestNetwork.Run("ip", "netns", "exec", network.Name, "ip", "-o", "-4", "addr", "show", "dev", network.InstanceInterface),
                StringComparison.Ordinal);
            Assert.Contains("tbf", TestNetwork.Run("tc", "qdisc", "show", "dev", network.RootInterface), StringComparison.Ordinal);
            Assert.Contains("tbf", TestNetwork.Run("tc", "qdisc", "show", "dev", network.IngressInterface), StringComparison.Ordinal);
        }
        finally
        {
            await network.DisposeAsync();
        }

        Assert.Empty(TestNetwork.Leftovers(test.Prefix));
        await network.DisposeAsync(); // A second dispose is harmless.
    }

    [NetworkEmulationFact]
    public async Task A_process_run_through_wrap_sees_the_instance_address_and_reaches_a_listener_on_the_host_address()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(ShapedLinkOptions.Unshaped);
        using var listener = new TcpListener(network.HostAddress, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var workingDirectory = Directory.CreateTempSubdirectory("netem-wrap-");
        try
        {
            var startInfo = new ProcessStartInfo("bash")
            {
                ArgumentList =
                {
                    "-c",
                    $"ip -o -4 addr show; pwd; exec 3<>/dev/tcp/{network.HostAddress}/{port} && printf '%s\\n' \"$NETEM_MARK\" >&3",
                },
                WorkingDirectory = workingDirectory.FullName,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            startInfo.Environment["NETEM_MARK"] = "hello from the namespace";
            await using var process = WrappedProcess.Start(network.Wrap(startInfo));

            using var cts = new CancellationTokenSource(Transfers.Timeout);
            using var socket = await listener.AcceptSocketAsync(cts.Token);
            await using var stream = new NetworkStream(socket);
            using var reader = new StreamReader(stream);
            Assert.Equal("hello from the namespace", await reader.ReadLineAsync(cts.Token));
            Assert.Equal(network.InstanceAddress, ((IPEndPoint)socket.RemoteEndPoint!).Address);
            Assert.Equal(0, await process.WaitAsync(Transfers.Timeout));

            // Inside, only loopback and the namespace's end exist: no eth0, no other instance's address.
            Assert.Contains($"inet {network.InstanceAddress}/30", process.StandardOutput, StringComparison.Ordinal);
            Assert.DoesNotContain($"inet {network.HostAddress}/", process.StandardOutput, StringComparison.Ordinal);
            Assert.DoesNotContain("eth0", process.StandardOutput, StringComparison.Ordinal);
            Assert.Contains(workingDirectory.FullName, process.StandardOutput, StringComparison.Ordinal);
        }
        finally
        {
            workingDirectory.Delete(recursive: true);
        }
    }

    [NetworkEmulationFact]
    public async Task The_root_namespace_reaches_a_server_listening_on_the_instance_address()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = 90_000_000 });
        await using var server = await Transfers.StartIperfServerAsync(network);

        using var client = new TcpClient();
        using var cts = new CancellationTokenSource(Transfers.Timeout);
        await client.ConnectAsync(network.InstanceAddress, int.Parse(Transfers.IperfPort, System.Globalization.CultureInfo.InvariantCulture), cts.Token);

        Assert.Equal(network.HostAddress, ((IPEndPoint)client.Client.LocalEndPoint!).Address.MapToIPv4());
    }

    [NetworkEmulationFact]
    public async Task Wrap_keeps_a_command_line_given_as_one_string()
    {
        await using var test = new TestNetwork();
        await using var network = await test.CreateAsync(ShapedLinkOptions.Unshaped);

        var wrapped = network.Wrap(new ProcessStartInfo("bash", "-c \"echo one two; ip -o -4 addr show\"")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        });
        await using var process = WrappedProcess.Start(wrapped);

        Assert.Equal(0, await process.WaitAsync(Transfers.Timeout));
        Assert.StartsWith("one two", process.StandardOutput, StringComparison.Ordinal);
        Assert.Contains($"inet {network.InstanceAddress}/30", process.StandardOutput, StringComparison.Ordinal);
    }

    [NetworkEmulationFact]
    public async Task An_index_whose_addresses_are_taken_is_refused_and_the_failed_create_leaves_nothing()
    {
        await using var first = new TestNetwork();
        await using var second = new TestNetwork();
        await using var network = await first.CreateAsync(ShapedLinkOptions.Unshaped);
        var index = network.HostAddress.GetAddressBytes()[2];

        var error = await Assert.ThrowsAsync<NetworkEmulationException>(() =>
            NetworkNamespace.CreateAsync(second.Prefix, index, ShapedLinkOptions.Unshaped, CancellationToken.None));

        Assert.Contains($"index {index} is taken", error.Message, StringComparison.Ordinal);
        Assert.Contains(network.RootInterface, error.Message, StringComparison.Ordinal);
        Assert.Empty(TestNetwork.Leftovers(second.Prefix));
    }

    [NetworkEmulationFact]
    public async Task A_create_that_fails_half_way_removes_what_it_made_but_not_what_was_there_before()
    {
        await using var test = new TestNetwork();
        var index = test.TakeIndex();

        // Someone else's interface already has the ifb device's name: the create fails at that step.
        TestNetwork.Run("ip", "link", "add", $"{test.Prefix}v{index}i", "type", "ifb");

        var error = await Assert.ThrowsAsync<NetworkEmulationException>(() =>
            NetworkNamespace.CreateAsync(test.Prefix, index, ShapedLinkOptions.Unshaped, CancellationToken.None));

        Assert.Contains($"`ip link add {test.Prefix}v{index}i type ifb` failed", error.Message, StringComparison.Ordinal);
        Assert.Equal([$"{test.Prefix}v{index}i"], TestNetwork.Leftovers(test.Prefix));
    }

    [NetworkEmulationFact]
    public async Task Cleanup_removes_every_leftover_of_its_prefix_and_kills_what_runs_inside_but_spares_other_prefixes()
    {
        await using var test = new TestNetwork();
        await using var other = new TestNetwork();

        // What a killed run leaves: a whole namespace with a process in it, and a half-made one's pieces.
        var abandoned = await test.CreateAsync(new ShapedLinkOptions { RateBytesPerSecond = 90_000_000 });
        await using var sleeper = WrappedProcess.Start(abandoned, "sleep", "300");
        TestNetwork.Run("ip", "netns", "add", $"{test.Prefix}-7");
        TestNetwork.Run("ip", "link", "add", $"{test.Prefix}v8a", "type", "veth", "peer", "name", $"{test.Prefix}v8b");
        TestNetwork.Run("ip", "link", "add", $"{test.Prefix}v9i", "type", "ifb");
        await using var spared = await other.CreateAsync(ShapedLinkOptions.Unshaped);
        Assert.Equal(7, TestNetwork.Leftovers(test.Prefix).Count);

        await NetworkNamespace.CleanupAsync(test.Prefix);

        Assert.Empty(TestNetwork.Leftovers(test.Prefix));
        await sleeper.Process.WaitForExitAsync().WaitAsync(Transfers.Timeout);
        Assert.True(sleeper.Process.HasExited);
        Assert.Equal(3, TestNetwork.Leftovers(other.Prefix).Count);
        await abandoned.DisposeAsync(); // Finds everything gone and says nothing.
    }
}
