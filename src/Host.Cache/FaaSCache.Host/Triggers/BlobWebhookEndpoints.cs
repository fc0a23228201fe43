namespace FaaSCache.Host.Triggers;

/// <summary>
/// The blobs extension's webhook, where Event Grid delivers storage's <c>BlobCreated</c> events to blob triggers with
/// <c>source: EventGrid</c> (Flex Consumption's only blob trigger): <c>POST /runtime/webhooks/blobs?functionName=Host.Functions.NAME</c>
/// with a system key (<c>code</c> or <c>x-functions-key</c>) when keys are enforced. It answers Event Grid's
/// subscription validation (the <c>SubscriptionValidationEvent</c>'s code back) and CloudEvents' (an OPTIONS with
/// <c>WebHook-Request-Origin</c>), and takes events in the Event Grid schema (an array) and the CloudEvents schema (one
/// event or a batch).
/// </summary>
public static class BlobWebhookEndpoints
{
    /// <summary>The webhook's path.</summary>
    public const string Path = "/runtime/webhooks/blobs";

    /// <summary>The system key the Functions host makes for the blobs extension's webhook.</summary>
    public const string SystemKeyName = "blobs_extension";

    private const string BlobCreated = "Microsoft.Storage.BlobCreated";
    private const string Validation = "Microsoft.EventGrid.SubscriptionValidationEvent";

    /// <summary>Maps the webhook.</summary>
    public static void Map(IEndpointRouteBuilder web, BlobTriggerService triggers, KeyAuthorizer keys)
    {
        ArgumentNullException.ThrowIfNull(web);
        web.MapMethods(Path, [HttpMethods.Options], (HttpContext context) =>
        {
            // CloudEvents' abuse protection: the delivery origin asks whether it may send.
            string origin = context.Request.Headers["WebHook-Request-Origin"].ToString();
            if (origin.Length == 0)
            {
                return Results.BadRequest(new { error = "an OPTIONS request to the webhook must carry WebHook-Request-Origin (CloudEvents validation)" });
            }

            context.Response.Headers["WebHook-Allowed-Origin"] = origin;
            context.Response.Headers["WebHook-Allowed-Rate"] = "*";
            return Results.Ok();
        });
        web.MapPost(Path, (HttpContext context, string? functionName, CancellationToken cancellationToken) => HandleAsync(context, functionName, triggers, keys, cancellationToken));
    }

    private static async Task<IResult> HandleAsync(HttpContext context, string? functionName, BlobTriggerService triggers, KeyAuthorizer keys, CancellationToken cancellationToken)
    {
        string name = functionName is { } given && given.StartsWith("Host.Functions.", StringComparison.OrdinalIgnoreCase) ? given["Host.Functions.".Length..] : functionName ?? string.Empty;
        if (name.Length == 0)
        {
            return Results.BadRequest(new { error = "query parameter 'functionName' (Host.Functions.<name>) is required" });
        }

        if (keys.CheckFunction(context.Request, AuthLevel.System, name) != KeyCheck.Allowed)
        {
            return Results.Unauthorized();
        }

        JsonNode? body;
        try
        {
            body = await JsonNode.ParseAsync(context.Request.Body, cancellationToken: cancellationToken).ConfigureAwait(false);
        }
        catch (JsonException e)
        {
            return Results.BadRequest(new { error = $"the body is not JSON: {e.Message}" });
        }

        JsonNode?[] events = body switch
        {
            JsonArray array => [.. array],
            JsonObject single => [single],
            _ => [],
        };
        if (events.Length == 0)
        {
            return Results.BadRequest(new { error = "the body holds no event (an Event Grid array, or a CloudEvent or a batch of them)" });
        }

        var problems = new List<string>();
        int fired = 0;
        foreach (JsonNode? e in events)
        {
            string type = Text(e?["eventType"]) ?? Text(e?["type"]) ?? string.Empty;
            if (type == Validation)
            {
                // Event Grid's handshake: the subscription is confirmed by echoing its code.
                return Results.Json(new { validationResponse = Text(e?["data"]?["validationCode"]) });
            }

            if (type != BlobCreated)
            {
                problems.Add($"event type '{type}' is not {BlobCreated}: ignored");
                continue;
            }

            string? key = KeyOfSubject(Text(e?["subject"]));
            if (key is null)
            {
                problems.Add($"subject '{Text(e?["subject"])}' is not /blobServices/default/containers/<container>/blobs/<blob>");
                continue;
            }

            string? why = await triggers.FireFromEventAsync(name, key, Text(e?["data"]?["eTag"]), cancellationToken).ConfigureAwait(false);
            if (why is null)
            {
                fired++;
            }
            else
            {
                problems.Add(why);
            }
        }

        return fired > 0 || problems.Count == 0
            ? Results.Accepted(value: new { fired, ignored = problems })
            : Results.NotFound(new { error = string.Join("; ", problems) });
    }

    /// <summary>The key (<c>container/blob</c>) of a storage event's subject.</summary>
    public static string? KeyOfSubject(string? subject)
    {
        const string containers = "/blobServices/default/containers/";
        if (subject is null || !subject.StartsWith(containers, StringComparison.Ordinal))
        {
            return null;
        }

        string rest = subject[containers.Length..];
        int blobs = rest.IndexOf("/blobs/", StringComparison.Ordinal);
        return blobs <= 0 || blobs + 7 >= rest.Length ? null : rest[..blobs] + "/" + rest[(blobs + 7)..];
    }

    private static string? Text(JsonNode? node) => node is JsonValue v && v.TryGetValue(out string? s) ? s : null;
}
