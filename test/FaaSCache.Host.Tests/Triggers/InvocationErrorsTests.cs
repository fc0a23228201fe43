using FaaSCache.Host.Bindings;
using FaaSCache.Host.Invocation;
using FaaSCache.Host.Triggers;
using FaaSCache.Host.Workers;
using Microsoft.AspNetCore.Http;

namespace FaaSCache.Host.Tests.Triggers;

/// <summary>The one map from what an HTTP-triggered invocation threw to its status and body.</summary>
[Trait("Category", "Unit")]
public sealed class InvocationErrorsTests
{
    [Fact]
    public void No_worker_coming_and_storage_unreachable_are_503_and_the_failures_of_the_function_and_its_bindings_500()
    {
        Assert.Equal(503, InvocationErrors.StatusOf(new WorkerStartupFailedException("python", "no worker")));
        Assert.Equal(503, InvocationErrors.StatusOf(new StorageUnavailableException("storage down")));
        Assert.Equal(503, InvocationErrors.StatusOf(new MembershipLeaseLostException("lease lost")));
        Assert.Equal(500, InvocationErrors.StatusOf(new FunctionInvocationException("failed")));
        Assert.Equal(500, InvocationErrors.StatusOf(new WorkerFailedException("worker exited")));
        Assert.Equal(500, InvocationErrors.StatusOf(new BindingException("no such binding")));
        Assert.Equal(500, InvocationErrors.StatusOf(new BlobNotFoundException("photos/a.jpg")));
        Assert.Equal(500, InvocationErrors.StatusOf(new SharedMemoryException("no map")));
    }

    [Fact]
    public void An_exception_the_map_does_not_name_is_not_an_invocations_answer()
        => Assert.Null(InvocationErrors.StatusOf(new InvalidOperationException("a bug")));

    [Fact]
    public async Task The_body_names_the_error_and_is_cut_at_its_longest()
    {
        var context = new DefaultHttpContext();
        context.Response.Body = new MemoryStream();

        await InvocationErrors.WriteAsync(context, new string('x', InvocationErrors.MaxErrorLength + 10), StatusCodes.Status503ServiceUnavailable);

        Assert.Equal(503, context.Response.StatusCode);
        Assert.Equal("application/json", context.Response.ContentType);
        JsonNode body = JsonNode.Parse(((MemoryStream)context.Response.Body).ToArray())!;
        Assert.Equal(new string('x', InvocationErrors.MaxErrorLength), body["error"]!.GetValue<string>());
    }
}
