using System.Text;
using System.Text.Json;
using Microsoft.Azure.Functions.Worker;
using Microsoft.Extensions.Logging;

namespace OrdersDotnet;

/// <summary>An order: the blob to process, and whether to refuse it (a message that always fails, for the poison queue).</summary>
public sealed class Order
{
    /// <summary>Gets or sets the blob under the incoming container.</summary>
    public string Name { get; set; } = string.Empty;

    /// <summary>Gets or sets a value indicating whether the order is refused.</summary>
    public bool Fail { get; set; }
}

/// <summary>What a processed order writes: the blob, upper-cased, and a message on the done queue.</summary>
public sealed class OrderResult
{
    /// <summary>Gets or sets the processed blob.</summary>
    [BlobOutput("%ProcessedContainer%/{name}", Connection = "AzureWebJobsStorage")]
    public byte[]? Processed { get; set; }

    /// <summary>Gets or sets the message for the done queue.</summary>
    [QueueOutput("%DoneQueue%", Connection = "AzureWebJobsStorage")]
    public string? Done { get; set; }
}

/// <summary>Processes an order message: reads the blob it names, writes it upper-cased, and says so on the done queue.</summary>
public sealed class ProcessOrder(ILogger<ProcessOrder> logger)
{
    /// <summary>The function.</summary>
    [Function("ProcessOrder")]
    public OrderResult Run(
        [QueueTrigger("%OrdersQueue%", Connection = "AzureWebJobsStorage")] Order order,
        [BlobInput("%IncomingContainer%/{name}", Connection = "AzureWebJobsStorage")] byte[] source,
        FunctionContext context)
    {
        if (order.Fail)
        {
            throw new InvalidOperationException($"order {order.Name} refused");
        }

        IReadOnlyDictionary<string, object?> data = context.BindingContext.BindingData;
        long dequeueCount = data.TryGetValue("DequeueCount", out object? count) ? Convert.ToInt64(count, System.Globalization.CultureInfo.InvariantCulture) : 0;
        string? id = data.TryGetValue("Id", out object? messageId) ? messageId?.ToString() : null;
        logger.LogInformation("Order {Name}: {Bytes} bytes, attempt {Attempt}", order.Name, source.Length, dequeueCount);
        return new OrderResult
        {
            Processed = Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(source).ToUpperInvariant()),
            Done = JsonSerializer.Serialize(new { name = order.Name, bytes = source.Length, dequeueCount, id }),
        };
    }
}
