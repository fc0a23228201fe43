using Microsoft.Azure.Functions.Worker.Builder;
using Microsoft.Extensions.Hosting;

// The isolated worker's entry point, as `func init --worker-runtime dotnet-isolated` writes it: the host starts this
// program with --functions-uri/--functions-worker-id/... and it connects back over FunctionRpc. ASP.NET Core
// integration: HTTP requests are proxied to the worker's own Kestrel and handled as HttpRequest/IActionResult.
FunctionsApplicationBuilder builder = FunctionsApplication.CreateBuilder(args);

builder.ConfigureFunctionsWebApplication();

builder.Build().Run();
