using Azure.Storage.Queues.Models;

namespace FaaSCache.Host.Queues;

/// <summary>
/// Queue triggers, as the Functions host's queues extension runs them: each queue-triggered function polls its queue
/// (at once while messages come, backing off to <see cref="StorageQueues.MaxPollingInterval"/> while it is empty),
/// takes up to <see cref="StorageQueues.BatchSize"/> messages at a time and runs them concurrently, deletes a message
/// whose run succeeded, makes a failed one visible again after <see cref="StorageQueues.VisibilityTimeout"/>, and moves a
/// message that failed <see cref="StorageQueues.MaxDequeueCount"/> times (or cannot be decoded) to <c>&lt;queue&gt;-poison</c>,
/// unchanged. With several instances each polls: a received message is invisible to the others while it runs.
/// </summary>
public sealed class QueueTriggerService(FunctionApp app, FunctionInvoker invoker, StorageQueues queues, ILogger<QueueTriggerService> logger, Start.HostLifecycle? lifecycle = null) : Triggers.PerFunctionTriggerService(app, lifecycle)
{
    /// <summary>How long a received message stays invisible to other instances while its function runs.</summary>
    public static readonly TimeSpan RunVisibility = TimeSpan.FromMinutes(10);

    private static readonly TimeSpan FirstPollDelay = TimeSpan.FromMilliseconds(100);

    /// <inheritdoc />
    protected override bool Handles(FunctionDefinition function) => function.Trigger.IsQueueTrigger;

    /// <inheritdoc />
    protected override async Task ListenAsync(FunctionDefinition function)
    {
        string connection, queue;
        try
        {
            connection = queues.ConnectionOf(function.Trigger);
            queue = queues.QueueNameOf(function.Trigger);
        }
        catch (InvalidOperationException e)
        {
            logger.LogError("Queue-triggered '{Function}' does not run: {Reason}", function.Name, e.Message);
            return;
        }

        QueueClient client, poison;
        while (true)
        {
            try
            {
                client = await queues.ClientAsync(connection, queue, Stopping).ConfigureAwait(false);
                poison = await queues.ClientAsync(connection, queue + StorageQueues.PoisonSuffix, Stopping).ConfigureAwait(false);
                break;
            }
            catch (OperationCanceledException) when (Stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                // Storage's queue service not up yet (or gone): the function listens once it answers.
                logger.LogWarning("Queue-triggered '{Function}' cannot reach queue '{Queue}' ({Reason}): is the account's queue service up (Azurite: its queue service)? Trying again in {Seconds:0.#} s", function.Name, queue, Describe(e), queues.MaxPollingInterval.TotalSeconds);
                try
                {
                    await Task.Delay(queues.MaxPollingInterval, Stopping).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }

        logger.LogInformation("Queue-triggered '{Function}' listens on queue '{Queue}' (poison queue '{Poison}', {Attempts} attempts)", function.Name, queue, poison.Name, queues.MaxDequeueCount);
        TimeSpan delay = FirstPollDelay;
        while (!Stopping.IsCancellationRequested)
        {
            try
            {
                QueueMessage[] messages = (await client.ReceiveMessagesAsync(queues.BatchSize, RunVisibility, Stopping).ConfigureAwait(false)).Value;
                if (messages.Length == 0)
                {
                    await Task.Delay(delay, Stopping).ConfigureAwait(false);
                    delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, queues.MaxPollingInterval.Ticks));
                    continue;
                }

                delay = FirstPollDelay;
                await Task.WhenAll(messages.Select(m => RunAsync(function, queue, client, poison, m))).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (Stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                logger.LogWarning("Polling queue '{Queue}' for '{Function}' failed ({Reason}); trying again in {Seconds:0.#} s", queue, function.Name, Describe(e), queues.MaxPollingInterval.TotalSeconds);
                try
                {
                    await Task.Delay(queues.MaxPollingInterval, Stopping).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }

    private async Task RunAsync(FunctionDefinition function, string queue, QueueClient client, QueueClient poison, QueueMessage message)
    {
        string body = message.Body.ToString();
        string? text = queues.Decode(body);
        if (text is null)
        {
            logger.LogError("Message {Id} in queue '{Queue}' is not base64 (extensions.queues.messageEncoding is base64); it goes to '{Poison}' without running '{Function}'", message.MessageId, queue, poison.Name, function.Name);
            await MoveToPoisonAsync(client, poison, message, body).ConfigureAwait(false);
            return;
        }

        if (message.DequeueCount > queues.MaxDequeueCount)
        {
            // Received more often than allowed (runs cut short by a crash): poison without another run, as the extension does.
            await MoveToPoisonAsync(client, poison, message, body).ConfigureAwait(false);
            return;
        }

        var trigger = new QueueTriggerEvent(queue, text, message.MessageId, message.DequeueCount, message.InsertedOn, message.ExpiresOn, message.NextVisibleOn, message.PopReceipt);
        try
        {
            await invoker.InvokeAsync(function, trigger, Stopping).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException || !Stopping.IsCancellationRequested)
        {
            if (message.DequeueCount >= queues.MaxDequeueCount)
            {
                logger.LogError("Queue-triggered '{Function}' failed on message {Id} {Attempts} times ({Message}); the message goes to '{Poison}'", function.Name, message.MessageId, message.DequeueCount, e.Message, poison.Name);
                await MoveToPoisonAsync(client, poison, message, body).ConfigureAwait(false);
            }
            else
            {
                logger.LogWarning("Queue-triggered '{Function}' failed on message {Id} (attempt {Attempt} of {Attempts}): {Message}", function.Name, message.MessageId, message.DequeueCount, queues.MaxDequeueCount, e.Message);
                await ReleaseAsync(client, message).ConfigureAwait(false);
            }

            return;
        }

        await DeleteAsync(client, message).ConfigureAwait(false);
    }

    private async Task MoveToPoisonAsync(QueueClient client, QueueClient poison, QueueMessage message, string body)
    {
        try
        {
            // The message as it was: a queue-triggered function on the poison queue reads it as any other.
            await poison.SendMessageAsync(body, CancellationToken.None).ConfigureAwait(false);
            await DeleteAsync(client, message).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RequestFailedException or HttpRequestException)
        {
            logger.LogError("Could not move message {Id} to '{Poison}' ({Reason}); it shows again in {Seconds:0} s", message.MessageId, poison.Name, Describe(e), RunVisibility.TotalSeconds);
        }
    }

    private async Task ReleaseAsync(QueueClient client, QueueMessage message)
    {
        try
        {
            await client.UpdateMessageAsync(message.MessageId, message.PopReceipt, visibilityTimeout: queues.VisibilityTimeout, cancellationToken: CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RequestFailedException or HttpRequestException)
        {
            logger.LogWarning("Could not make message {Id} visible again ({Reason}); it shows again in {Seconds:0} s", message.MessageId, Describe(e), RunVisibility.TotalSeconds);
        }
    }

    private async Task DeleteAsync(QueueClient client, QueueMessage message)
    {
        try
        {
            await client.DeleteMessageAsync(message.MessageId, message.PopReceipt, CancellationToken.None).ConfigureAwait(false);
        }
        catch (RequestFailedException e) when (e.Status == 404)
        {
            // Gone already (its visibility ran out and another instance took it): that run deletes it.
        }
        catch (Exception e) when (e is RequestFailedException or HttpRequestException)
        {
            logger.LogWarning("Could not delete message {Id} ({Reason}); it may run again", message.MessageId, Describe(e));
        }
    }

    private static string Describe(Exception e) => e is RequestFailedException r ? $"storage answered {r.Status} {r.ErrorCode}" : e.Message;
}
