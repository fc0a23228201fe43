namespace FaaSCache.Peers.Tests;

/// <summary>
/// The test assembly is also a small program: <c>serve-peer</c> runs one cachelet's peer service as a separate
/// process (a test kills it mid-transfer), <c>measure</c> prints RH throughput over gRPC against a raw TCP copy.
/// Under the test runner this entry point is not used.
/// </summary>
public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        switch (args.FirstOrDefault())
        {
            case PeerServerProcess.Command:
                return await PeerServerProcess.RunAsync(args[1..]);
            case PeerThroughput.Command:
                return await PeerThroughput.RunAsync(args[1..]);
            default:
                await Console.Error.WriteLineAsync($"usage: FaaSCache.Peers.Tests {PeerServerProcess.Command} ... | {PeerThroughput.Command} [--sizes 16,128] [--chunks 256,1024] [--n 15] [--warmup-seconds 5] [--csv FILE]");
                return 2;
        }
    }
}
