using System.Net;
using System.Net.Sockets;
using System.Text;
using Azure.Storage.Sas;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Host.Tests.BlobEndpoint;

namespace FaaSCache.Host.Tests.Security;

/// <summary>Row 9: a body is read as it arrives, never allocated from the length a client announces.</summary>
[Trait("Category", "Security")]
public sealed class SdkEndpointBodyTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task a_put_that_announces_half_a_gigabyte_and_sends_a_kilobyte_costs_about_a_megabyte_and_writes_nothing()
    {
        await using SdkEndpointRig rig = await SdkEndpointRig.StartAsync(azurite);
        string container = AzuriteServer.NewContainerName("body");
        await rig.Direct().GetBlobContainerClient(container).CreateIfNotExistsAsync();
        string sas = new BlobSasBuilder(BlobContainerSasPermissions.All, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = container }
            .ToSasQueryParameters(new Azure.Storage.StorageSharedKeyCredential(AzuriteServer.AccountName, AzuriteServer.AccountKey)).ToString();

        foreach (string target in new[] { $"/{AzuriteServer.AccountName}/{container}/big.bin?{sas}", $"/{AzuriteServer.AccountName}/{container}/big.bin?comp=block&blockid=AAAA&{sas}" })
        {
            long before = GC.GetTotalAllocatedBytes(precise: true);
            using (var tcp = new TcpClient())
            {
                await tcp.ConnectAsync(IPAddress.Loopback, rig.Address.Port);
                NetworkStream stream = tcp.GetStream();
                string head = $"PUT {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2025-11-05\r\nx-ms-blob-type: BlockBlob\r\nContent-Length: {BlobEndpointHandler.MaxBufferedBody}\r\n\r\n";
                await stream.WriteAsync(Encoding.ASCII.GetBytes(head));
                await stream.WriteAsync(new byte[1024]);
                await stream.FlushAsync();
                await Task.Delay(500); // the endpoint has the request and waits for the rest
            }

            await Task.Delay(200);
            long allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
            Assert.True(allocated < 64L * 1024 * 1024, $"{target}: {allocated:N0} bytes allocated for a request that sent 1 KiB");
        }

        Assert.False(await rig.Direct().GetBlobContainerClient(container).GetBlobClient("big.bin").ExistsAsync());
        Assert.DoesNotContain(rig.Requests.Recent(null), r => r.Status is >= 200 and < 300);
    }
}
